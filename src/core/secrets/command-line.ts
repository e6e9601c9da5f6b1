/**
 * Passwords given to commands, by family: database clients, ssh helpers,
 * HTTP clients, container registries, network shares, package registries,
 * cloud CLIs, and any tool's long --password/--token style options. Only the
 * password's shell word goes (`sshpass -p [REDACTED:cli-password] ssh ...`):
 * the command, its user names, hosts and other options stay, whatever the
 * quoting (shell.ts). A word that only names a value ($PW, "${PW}", <pw>,
 * ***) is no secret and stays too.
 *
 * Each family is a table of command names and the options that carry a
 * password in it, because the same letter means different things: `-p` is
 * the password glued to mysql (`-p` alone prompts, the next word is the
 * database), a separate word after sshpass or docker login, and a port to
 * ssh and redis-cli.
 */
import { args, command, namesAValue, unquote, userPassword, WORD } from "./shell";
import { CLI_ARGS_MAX_CHARS } from "./tuning";
import { isPlaceholder, type SecretRule } from "./values";

const A = args(CLI_ARGS_MAX_CHARS);
const KIND = "cli-password";

/**
 * `<command> ... <flag><sep><word>`: glued (-pX), spaced (-p X or --flag=X),
 * or either. The command's names are the rule's needle: a text without them
 * skips the rule (a plain scan for "mysql" costs a fraction of one for
 * "mysql ... -p" with its word-boundary checks).
 */
function option(commands: string, flags: string, sep: "glued" | "spaced" | "either"): SecretRule {
  const between = sep === "glued" ? "" : sep === "spaced" ? "(?:=|[ \\t]+)" : "(?:=|[ \\t]*)";
  return {
    kind: KIND,
    pattern: new RegExp(`${command(commands)}${A}\\s(?:${flags})${between}(?<v>${WORD})`, "g"),
    needle: new RegExp(commands),
    group: "v",
    accept: (v) => !namesAValue(v),
  };
}

/** `<command> ... <flag> user<sep>password`: the user stays. */
function userOption(commands: string, flags: string, sep: string): SecretRule {
  return {
    kind: KIND,
    pattern: new RegExp(`${command(commands)}${A}\\s(?:${flags})(?:=|[ \\t]*)(?:${userPassword(sep)})`, "g"),
    needle: new RegExp(commands),
    group: "v",
    accept: (v) => !namesAValue(v),
  };
}

/** A rule of its own shape; the value is the group v. */
const shaped = (pattern: RegExp, accept: (v: string, match: string) => boolean = (v) => !namesAValue(v), needle?: RegExp): SecretRule => ({
  kind: KIND,
  pattern,
  needle,
  group: "v",
  accept,
});

const MYSQL =
  "mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlbinlog|mysqlpump|mysqlslap|mysqlsh|mariadb|mariadb-dump|mariadb-admin|mariadb-import|mariadb-check|mariadb-show|mariadb-binlog|mariadb-slap";
const MONGO = "mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|mongofiles";
const REGISTRY_LOGIN = "(?:docker|podman|nerdctl|buildah|skopeo|oras|finch|crane(?:[ \\t]+auth)?|helm(?:[ \\t]+registry)?)[ \\t]+login";
const CLOUD_LOGIN = "(?:az(?:[ \\t]+acr)?|oc|cf|ibmcloud|bx)[ \\t]+login";
const SQLSERVER = "sqlcmd|bcp|osql|mssql-cli|sqsh";
const LDAP = "ldapsearch|ldapadd|ldapmodify|ldapdelete|ldapwhoami|ldapcompare|ldapmodrdn|ldapexop|ldapurl";
const SMB = "smbclient|rpcclient|smbcacls|smbget|smbtree|smbmap|winexe|net[ \\t]+(?:rpc|ads|sam)";

// Long options that carry a secret in any tool: --password=, -password, --db-password, --client_secret, --sas-token.
const SECRET_OPTION =
  "(?:[a-z]{1,20}[-_]){0,4}(?:password|passwd|pass|pwd|passphrase|token|api[-_]?key|secret|secret[-_]key|access[-_]key|auth[-_]token|client[-_]secret|account[-_]key|storage[-_]key|shared[-_]key|master[-_]key|sas[-_]token|secret[-_]string|secret[-_]binary)";

/** A generic option's value: a quoted word may be letters only; a bare one of letters only is a type or a word of docs (--token string). */
function genericValue(v: string): boolean {
  if (namesAValue(v)) return false;
  const text = unquote(v);
  if (text.length < 3) return false;
  return !isPlaceholder(/^(?:\$?'|"|\\")/.test(v) ? `"${text}"` : text);
}

// Commands that read a password from their standard input, for `echo pw | <command>` and `<command> <<< pw`.
const READS_STDIN = String.raw`\bsudo\b[^\n|;&]{0,64}?[ \t]-[A-Za-z]*S\b|--password-stdin\b|\bpasswd[ \t]+--stdin\b|\bchpasswd\b|--data-file[= ]-(?!\S)|--passphrase-fd[= ]0\b|-passin[ \t]+stdin\b|\bdocker[ \t]+secret[ \t]+create[ \t]+\S+[ \t]+-(?!\S)`;
const STDIN_TARGET = new RegExp(`\\|[^\\n|;&]*?(?:${READS_STDIN})`);

/**
 * What every rule below needs somewhere in the text: an option (-p, --password, /p:), a pipe or a
 * here-string, a '//' share, a password variable, or one of the commands whose password has no
 * option in front of it. Prose without any of them (most memories) skips the whole family.
 */
const GATE =
  /(?:^|\s)--?[A-Za-z]|\/p(?:ass(?:word)?)?:|\||<<<|\/\/|SSHPASS=|REDISCLI_AUTH=|_auth|_password|npmAuth|\bnet[ \t]+use|http-basic\.|pypi-token\.|\b(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)\b|\b(?:cargo|vault)[ \t]+login|setapikey|\bmc[ \t]|configure[ \t]+set|secrets[ \t]+(?:set|import)/i;

const RULES: SecretRule[] = [
  // Database clients: mysql's password is glued to -p; the others take it as the next word.
  option(MYSQL, "-p", "glued"),
  option(`${MONGO}|mycli|cqlsh`, "-p", "either"),
  // mysqladmin's new password: `mysqladmin -u root -pOld password 'New'`.
  option("mysqladmin|mariadb-admin", "password", "spaced"),
  option("redis-cli|keydb-cli", "-a|--pass", "spaced"),
  option(SQLSERVER, "-P", "either"),
  option("ipmitool|mosquitto_pub|mosquitto_sub|mosquitto_rr", "-P", "either"),
  option("influx", "-password", "spaced"),
  // Oracle: user/password[@db] right after the command or its options.
  shaped(
    new RegExp(
      `${command("sqlplus|sqlldr|expdp|impdp|rman|dgmgrl")}(?:[ \\t]+-\\S+)*[ \\t]+(?:(?:target|auxiliary|catalog)[ \\t]+|userid=)?["']?[A-Za-z][\\w$#]*\\/(?<v>[^\\s@/'"]+)(?=[@\\s'"]|$)`,
      "gm",
    ),
    undefined,
    /\b(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)\b/,
  ),

  // SSH and remote shells.
  shaped(new RegExp(`${command("sshpass")}(?:[ \\t]+-[a-oq-zA-Z]\\S*)*[ \\t]+-p[ \\t]*(?<v>${WORD})`, "g"), undefined, /sshpass/),
  option("plink|pscp|psftp|putty|kitty", "-pw", "spaced"),
  // A key's old and new passphrase, one rule each (a rule takes one flag a command); `-N ''` is an empty one and stays.
  option("ssh-keygen", "-P", "spaced"),
  option("ssh-keygen", "-N", "spaced"),
  option("rdesktop|evil-winrm|crackmapexec|netexec|nxc|smbmap|ncftp|ncftpget|ncftpput|npm-cli-login", "-p", "either"),
  shaped(
    new RegExp(`${command("xfreerdp|xfreerdp3|wlfreerdp|sdl-freerdp|cmdkey|winscp|WinSCP\\.com")}${A}\\s\\/(?:p|pass|password):(?<v>${WORD})`, "gi"),
    undefined,
    /\/p(?:ass(?:word)?)?:/i,
  ),
  shaped(new RegExp(`(?<![\\w.-])(?:SSHPASS|REDISCLI_AUTH)=(?<v>${WORD})`, "g"), undefined, /SSHPASS=|REDISCLI_AUTH=/),
  // A password assignment quoted whole, spaces and all: docker run -e "DB_PASSWORD=a b", mount -o 'user=u,password=a b'.
  shaped(
    /(?<q>\\?["'])(?:[\w.-]{1,64}=[^"'\n,\\]{0,256},){0,16}(?:[\w.-]{0,64}(?:passw(?:or)?d|passphrase|pwd)|(?:[\w.-]{0,63}[_.-])?pass)=(?<v>[^"'\n,\\]{1,128})(?=,|\k<q>)/gi,
    (v) => !namesAValue(v) && !isPlaceholder(v) && v.length >= 3,
    /pass|pwd/i,
  ),

  // HTTP clients: basic auth as user:password.
  userOption("curl", "-u|--user|-U|--proxy-user", ":"),
  userOption("http|https|httpie|xh|xhs", "-a|--auth", ":"),
  userOption("ab", "-A|-P", ":"),
  userOption("lynx", "-auth", ":"),

  // Container registries (and -p of cloud logins: az, oc, cf, ibmcloud).
  option(`${REGISTRY_LOGIN}|${CLOUD_LOGIN}`, "-p", "either"),
  userOption("skopeo|podman|buildah", "--creds|--src-creds|--dest-creds|--from-creds", ":"),

  // Network shares: user%password, net use's positional password, //user:password@host/share.
  userOption(SMB, "-U|--user", "%"),
  shaped(
    new RegExp(`${command("net")}[ \\t]+use[ \\t]+(?:(?:[A-Za-z]:|\\*)[ \\t]+)?\\\\\\\\\\S+(?:[ \\t]+\\/u(?:ser)?:\\S+)?[ \\t]+(?<v>(?![/*])${WORD})`, "gi"),
    undefined,
    /\bnet[ \t]+use\b/i,
  ),
  shaped(new RegExp(`${command("net")}[ \\t]+user[ \\t]+(?![/-])\\S+[ \\t]+(?<v>(?![/*])${WORD})`, "gi"), undefined, /\bnet[ \t]+user\b/i),
  userOption("lftp", "-u", ","),
  {
    kind: "password",
    pattern: /(?<![\w:/])\/\/[^\s:/@'"]{1,64}:(?<v>[^\s@'"/]{1,128})@[\w.-]+\//g,
    needle: /\/\/[^\s:/@'"]{1,64}:/,
    group: "v",
    accept: (v) => !namesAValue(v),
  },

  // Package registries.
  option("twine|poetry[ \\t]+publish|dotnet[ \\t]+nuget[ \\t]+(?:add|update)[ \\t]+source", "-p", "either"),
  shaped(
    new RegExp(`${command("poetry")}[ \\t]+config[ \\t]+(?:--\\S+[ \\t]+)*(?:http-basic\\.\\S+[ \\t]+(?!-)\\S+|pypi-token\\.\\S+)[ \\t]+(?<v>${WORD})`, "g"),
    undefined,
    /http-basic\.|pypi-token\./,
  ),
  shaped(
    new RegExp(
      `${command("npm|yarn|pnpm")}[ \\t]+(?:config[ \\t]+)?set[ \\t]+(?:-\\S+[ \\t]+)*["']?\\S*(?:_auth|_authToken|_password|npmAuthToken|npmAuthIdent)["']?(?:=|[ \\t]+)(?<v>${WORD})`,
      "g",
    ),
    undefined,
    /_auth|_password|npmAuth/,
  ),
  shaped(
    new RegExp(`${command("cargo")}[ \\t]+login[ \\t]+(?:--registry[ =]\\S+[ \\t]+)?(?<v>${WORD})`, "g"),
    (v) => !namesAValue(v) && unquote(v).length >= 8,
    /cargo[ \t]+login/,
  ),
  shaped(new RegExp(`${command("nuget|nuget\\.exe")}[ \\t]+setapikey[ \\t]+(?<v>${WORD})`, "gi"), undefined, /setapikey/i),
  option("dotnet[ \\t]+nuget[ \\t]+push|nuget[ \\t]+push", "-k", "spaced"),
  // JVM and Gradle properties: -Dnexus.password=..., -PsigningPassword=...
  shaped(
    new RegExp(`(?<=\\s)-[DP][\\w.-]*(?:[Pp]ass(?:word|wd)|[Pp]wd|[Ss]ecret|[Tt]oken|[Aa]pi[._-]?[Kk]ey|[Ss]igning[Kk]ey)=(?<v>${WORD})`, "g"),
    undefined,
    /\s-[DP]/,
  ),

  // Cloud CLIs.
  shaped(
    new RegExp(
      `${command("aws")}[ \\t]+configure[ \\t]+set[ \\t]+(?:[\\w-]+\\.)?(?:aws_secret_access_key|aws_session_token|aws_security_token)[ \\t]+(?<v>${WORD})`,
      "g",
    ),
    undefined,
    /configure[ \t]+set/,
  ),
  option("az[ \\t]+keyvault[ \\t]+secret[ \\t]+set", "--value", "spaced"),
  option("gh[ \\t]+secret[ \\t]+set", "--body|-b", "either"),
  option("doctl[ \\t]+auth[ \\t]+init", "-t", "spaced"),
  shaped(
    new RegExp(`${command("vault")}[ \\t]+login[ \\t]+(?:-\\S+[ \\t]+)*(?<v>${WORD})`, "g"),
    (v) => !namesAValue(v) && !/=/.test(v) && unquote(v).length >= 8,
    /vault[ \t]+login/,
  ),
  shaped(
    new RegExp(`${command("mc")}[ \\t]+(?:alias[ \\t]+set|config[ \\t]+host[ \\t]+add)[ \\t]+\\S+[ \\t]+\\S+[ \\t]+\\S+[ \\t]+(?<v>${WORD})`, "g"),
    undefined,
    /\bmc[ \t]/,
  ),
  // Every value of a secret store's literal: kubectl --from-literal=key=value, fly secrets set K=V ... (16 pairs a command).
  {
    kind: KIND,
    pattern: new RegExp(`--from-literal(?:=|[ \\t]+)(?:${userPassword("=")})`, "g"),
    needle: /--from-literal/,
    group: "v",
    accept: (v) => !namesAValue(v),
  },
  shaped(
    new RegExp(
      `(?<=\\s)[A-Za-z_][A-Za-z0-9_]*=(?<=(?:fly|flyctl)[ \\t]+secrets[ \\t]+(?:set|import)(?:[ \\t]+[^\\s|;&]+){0,15}[ \\t]+[A-Za-z_][A-Za-z0-9_]*=)(?<v>${WORD})`,
      "g",
    ),
    undefined,
    /secrets[ \t]+(?:set|import)/,
  ),

  // Key stores and encryption tools.
  option("openssl", "-k", "spaced"),
  shaped(new RegExp(`-(?:passin|passout|pass|password)[ \\t]+pass:(?<v>${WORD})`, "g"), undefined, /pass:/),
  shaped(new RegExp(`-(?:store|key|srcstore|deststore|srckey|destkey|new)pass[ \\t]+(?<v>${WORD})`, "g"), undefined, /pass[ \t]/),
  option("unzip|zip|zipcloak", "-P", "spaced"),
  option("7z|7za|7zr|7zz", "-p", "glued"),
  option(LDAP, "-w", "either"),
  option("ldappasswd", "-w|-a|-s", "either"),
  // htpasswd -b takes the password on the line: the 3rd word (file user password), or the 2nd with -n (user password).
  shaped(
    new RegExp(
      `${command("htpasswd")}(?:[ \\t]+-[A-Za-z]+)+(?<=[ \\t]-[A-Za-z]*b[A-Za-z]*(?:[ \\t]+-[A-Za-z]+)*)(?<=[ \\t]-[A-Za-z]*n[A-Za-z]*(?:[ \\t]+-[A-Za-z]+)*)[ \\t]+[^\\s-]\\S*[ \\t]+(?<v>${WORD})`,
      "g",
    ),
    undefined,
    /htpasswd/,
  ),
  shaped(
    new RegExp(
      `${command("htpasswd")}(?:[ \\t]+-[A-Za-z]+)+(?<=[ \\t]-[A-Za-z]*b[A-Za-z]*(?:[ \\t]+-[A-Za-z]+)*)(?<![ \\t]-[A-Za-z]*n[A-Za-z]*(?:[ \\t]+-[A-Za-z]+)*)[ \\t]+[^\\s-]\\S*[ \\t]+[^\\s-]\\S*[ \\t]+(?<v>${WORD})`,
      "g",
    ),
    undefined,
    /htpasswd/,
  ),

  // A password piped or here-string'ed into a command that reads it from stdin (the word in a lookahead: matched once, never backtracked into).
  shaped(
    new RegExp(
      `${command("echo|printf")}(?:[ \\t]+-[neE]+)*(?:[ \\t]+(?:'%s(?:\\\\n)?'|"%s(?:\\\\n)?"))?[ \\t]+(?=(?<v>${WORD}))\\k<v>[ \\t]*\\|[^\\n|;&]{0,160}`,
      "g",
    ),
    (v, match) => !namesAValue(v) && STDIN_TARGET.test(match),
    /\|/,
  ),
  shaped(new RegExp(`(?:${READS_STDIN})[^\\n|;&<]{0,128}?<<<[ \\t]*(?<v>${WORD})`, "g"), undefined, /<<</),

  // Any tool's long option that names a secret: --password=x, --db-password 'x', -token x, --client_secret=x.
  { kind: KIND, pattern: new RegExp(`(?:^|(?<=\\s))--?${SECRET_OPTION}(?:=|[ \\t]+)(?<v>${WORD})`, "gim"), group: "v", accept: genericValue },
];

export const COMMAND_LINE_RULES: SecretRule[] = RULES.map((r) => ({ ...r, gate: GATE }));
