/**
 * One memory as one line of Markdown an agent is shown (the recall block, the
 * learnings block). The text must survive exactly: `fulfilled_at`,
 * `scripts/backfill_fulfilled_at.ts` and `STRIPE_WEBHOOK_SECRET` are names an
 * agent will type back, so no character of them may be dropped. Yet the line
 * is injected into a Markdown document, so it must not start a heading or a
 * list, span lines, or let `*`, `_`, `<`, `[` or a stray backtick change how
 * the rest reads. Words holding such characters go into code spans (whose
 * content Markdown shows verbatim); plain prose is left as it is.
 *
 * Written here rather than taken from a Markdown library: those render or
 * parse whole documents; this is a few lines of tokenising with one rule.
 */

/** Characters that can change inline rendering when outside a code span. */
const ACTIVE = /[`*_<>[\]\\|~$^{}&]/;
/** `--dry-run`: typographic renderers turn a leading `--` into a dash. */
const LONG_FLAG = /^--[\p{L}\p{N}]/u;
/** Block markers a line of content may start with: the content's own heading/list/quote syntax. */
const BLOCK_MARKER = /^\s*(#{1,6}|[-*+>]|\d{1,3}[.)])\s+/;
/** A line that is only a code fence (with its language), a rule or a table border. */
const FENCE_OR_RULE = /^(`{3,}|~{3,})[\w+-]*$|^[-=_*|:+ ]+$/;
/** `**bold**`, `*em*` wrapping plain words, bounded by space or punctuation (never inside a path or glob). */
const EMPHASIS = /(^|[\s(])(\*{1,3})(?=[\p{L}\p{N}])([^*`\n]*?[\p{L}\p{N}.!?])\2(?=$|[\s).,;:!?])/gu;

/** A backtick fence longer than any backtick run in `text`, with padding when the text touches a backtick. */
export function codeSpan(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") || (text.startsWith(" ") && text.endsWith(" ")) ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** Splits a line into balanced code spans (kept as written) and text between them (CommonMark: a run of n backticks closes at the next run of exactly n). */
function splitCode(line: string): { code: boolean; text: string }[] {
  const parts: { code: boolean; text: string }[] = [];
  let plain = "";
  let i = 0;
  while (i < line.length) {
    if (line[i] !== "`") {
      plain += line[i++];
      continue;
    }
    let n = 1;
    while (line[i + n] === "`") n++;
    const fence = "`".repeat(n);
    let close = -1;
    for (let j = line.indexOf(fence, i + n); j !== -1; j = line.indexOf(fence, j + 1)) {
      let run = 0;
      while (line[j + run] === "`") run++;
      if (run === n && line[j - 1] !== "`") {
        close = j;
        break;
      }
      j += run - 1;
    }
    if (close === -1) {
      // Unbalanced: a literal backtick run, protected with the word it is in.
      plain += fence;
      i += n;
      continue;
    }
    if (plain) parts.push({ code: false, text: plain });
    plain = "";
    parts.push({ code: true, text: line.slice(i, close + n) });
    i = close + n;
  }
  if (plain) parts.push({ code: false, text: plain });
  return parts;
}

/** One whitespace-free word: code-spanned when it holds active characters, trailing sentence punctuation left outside. */
function protectWord(word: string): string {
  if (!ACTIVE.test(word) && !LONG_FLAG.test(word)) return word;
  let core = word;
  let lead = "";
  let tail = "";
  const trail = /[.,;:!?]+$/.exec(core);
  if (trail && trail.index > 0) {
    tail = trail[0];
    core = core.slice(0, trail.index);
  }
  const count = (ch: string) => core.split(ch).length - 1;
  if (core.length > 1 && core.endsWith(")") && count(")") > count("(")) {
    tail = `)${tail}`;
    core = core.slice(0, -1);
  }
  if (core.length > 1 && core.startsWith("(") && count("(") > count(")")) {
    lead = "(";
    core = core.slice(1);
  }
  if (!ACTIVE.test(core) && !LONG_FLAG.test(core)) return word;
  return `${lead}${codeSpan(core)}${tail}`;
}

function protectText(text: string): string {
  const plain = text.replace(EMPHASIS, (_m, before: string, _stars: string, inner: string) => `${before}${inner}`);
  return plain
    .split(/(\s+)/)
    .map((w) => (/^\s*$/.test(w) ? w : protectWord(w)))
    .join("");
}

/** Cuts at a word boundary near `max`; the cut never lands inside a word that fits. The caller adds the ellipsis (outside any code span). */
function cut(line: string, max: number): { text: string; cut: boolean } {
  if (line.length <= max) return { text: line, cut: false };
  const head = line.slice(0, max - 1);
  const space = head.lastIndexOf(" ");
  return { text: (space > max * 0.6 ? head.slice(0, space) : head).replace(/[\s,;:.-]+$/, ""), cut: true };
}

/**
 * The first meaningful line of `content` (or all of it, `whole`), flattened to
 * one line of at most about `max` characters of content, safe inside a
 * Markdown list item, every identifier, path and code span kept verbatim.
 */
export function inlineMarkdown(content: string, max: number, whole = false): string {
  const lines = content
    .split(/\r?\n|\r/)
    .map((l) => l.replace(BLOCK_MARKER, "").replace(/\s+/g, " ").trim())
    // Fences (```ts), rules (---) and table borders say nothing about the memory.
    .map((l) => (FENCE_OR_RULE.test(l) ? "" : l));
  // Nothing but fences and rules: show them, protected, rather than an empty line.
  const line = (whole ? lines.filter((l) => l.length > 0).join(" ") : lines.find((l) => l.length > 0)) || content.replace(/\s+/g, " ").trim();
  const short = cut(line, max);
  const out = splitCode(short.text)
    .map((p) => (p.code ? p.text : protectText(p.text)))
    .join("");
  return short.cut ? `${out}…` : out;
}
