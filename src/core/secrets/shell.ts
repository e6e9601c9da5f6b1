/**
 * Pieces of regular expressions (as sources) for command lines as a session
 * shows them: typed in a prompt, in a tool call's command, quoted in a JSON
 * string (`\"...\"`), or inside `bash -c "..."`. A password given to a command
 * is one shell word, whatever its quoting: bare with backslash escapes
 * (`pa\ ss`), '...', "..." (with \" inside), $'...' (with \' inside) or
 * JSON-escaped \"...\"; the whole word is the secret, quotes included, so a
 * marker stands where the word stood.
 *
 * Linear by construction: quoted parts end at their quote or the line's end
 * and are written as unrolled loops (a run of plain characters, then escape
 * and run again: no choice per character, which also keeps the engine from
 * saving a backtracking state per character), a word has at most 64 parts,
 * and a word is only ever the last thing a pattern matches, so a match never
 * backtracks into it.
 */

// A run of backslashes escapes the character after it: one in a shell, two once the command sits in a JSON string.
const ANSI_C = String.raw`\$'[^'\\\n]*(?:\\+[^\n\\][^'\\\n]*)*'`;
const JSON_QUOTED = String.raw`\\"[^"\\\n]*(?:\\[^"\n][^"\\\n]*)*\\"`;
const SINGLE = String.raw`'[^'\n]*'`;
const DOUBLE = String.raw`"[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"`;
// An escaped quote belongs to the word only inside it (pa\"ss): at its end it closes a JSON-escaped string around the command.
const ESCAPED = String.raw`\\+(?:[^\n"'\\]|["'](?=[^\s\\|&;<>()\x60,}\]]))`;
// Whitespace, quotes, backslashes and the shell's control operators end a bare run.
const BARE = String.raw`[^\s'"\\|&;<>()\x60]+`;

/** One shell word that is not a flag (does not start with '-') and not already a marker. */
export const WORD = String.raw`(?![-\s]|\[REDACTED)(?:${ANSI_C}|${JSON_QUOTED}|${SINGLE}|${DOUBLE}|${ESCAPED}|${BARE}){1,64}`;

/**
 * The rest of a command up to a password option: anything on the line short
 * of a pipe, a ';' or a '&', also across up to 8 backslash-newline
 * continuations (`docker login \` on one line, `  -p ...` on the next), at
 * most `max` characters a line, shortest first. (A per-character choice
 * between a plain character and an escaped newline cost 5x more to scan.)
 */
export const args = (max: number) => String.raw`(?:[^\n|;&]{0,${max}}?\\\r?\n){0,8}?[^\n|;&]{0,${max}}?`;

/**
 * A command's name as a word of its own: after the line's start, a space, a
 * quote, a path ('/usr/bin/mysql') or '$(' and '`'; not inside another name
 * (mysql-client, my_mysql) or a file name (mysql.cnf).
 */
export const command = (names: string) => String.raw`(?<![\w.-])(?:${names})(?![\w.-])`;

/**
 * `user<sep>password` as one option value, as curl, smbclient and lftp take
 * it (separators ':', '%' and ','): the user stays, the password goes, quotes
 * kept where they were. Four alternatives, one group each (v, v1, v2, v3):
 * '...', "...", JSON-escaped \"...\", and bare.
 */
export function userPassword(sep: string): string {
  const user = String.raw`[^\s${sep}'"\\]*${sep}`;
  return [
    String.raw`'${user}(?<v>[^'\n]+)`,
    String.raw`"${user}(?<v1>(?=[^"\n])[^"\\\n]*(?:\\[^\n][^"\\\n]*)*)`,
    String.raw`\\"${user}(?<v2>(?=[^"\\\n]|\\[^"\n])[^"\\\n]*(?:\\[^"\n][^"\\\n]*)*)`,
    String.raw`${user}(?<v3>${WORD})`,
  ]
    .map((a) => `(?:${a})`)
    .join("|");
}

/** The text a shell word stands for: quotes and escapes taken off (good enough to judge it, not to run it). */
export function unquote(word: string): string {
  let w = word;
  if (/^\\".*\\"$/s.test(w)) w = w.slice(2, -2);
  else if (/^\$'.*'$/s.test(w)) w = w.slice(2, -1);
  else if (/^(["'`]).*\1$/s.test(w) && w.length >= 2) w = w.slice(1, -1);
  return w.replace(/\\(.)/g, "$1");
}

/**
 * A word that names a value instead of being one: a variable ($PW, "${PW}",
 * %PW%), a command substitution, a template ({{ .pw }}, <password>), a mask
 * (***, xxxx, ...), a marker, or nothing at all. A letters-only word is kept
 * as a secret here (unlike isPlaceholder): after `sshpass -p` it can only be
 * the password.
 */
export function namesAValue(word: string): boolean {
  const v = unquote(word).trim();
  return (
    v.length === 0 ||
    /^[$%<{[]/.test(v) || // $PW, ${PW}, $(cat f), %PW%, <password>, {{ x }}, [REDACTED:...]
    /^(?:\*+|x{3,}|\.{3}|…|-)$/i.test(v) // masks, and '-' for stdin
  );
}
