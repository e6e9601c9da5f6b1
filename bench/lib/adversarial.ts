/**
 * Inputs built to make a regular expression backtrack: long runs of a rule's
 * prefix with the part that would complete it missing. Redaction runs on every
 * request body, so each must stay linear in its size.
 */
export function adversarialInputs(size: number): Record<string, string> {
  const rep = (unit: string) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
  return {
    "mysql words": rep("mysql "),
    "curl words": rep("curl -H x "),
    "x- header prefixes": rep("x-"),
    "name separators": rep("a_"),
    "token word": rep("token"),
    "pass word run": rep("db_pass"),
    "url schemes": rep("a://b:"),
    "url without at": `a://b:${rep("x")}`,
    "jwt prefix": `eyJ${rep("a")}`,
    "machine words": rep("machine "),
    "keyword and value": rep("password x "),
    "slack dashes": `xoxb-${rep("a-")}`,
    "flag dashes": `--${rep("a-")}`,
    "pem without end": rep("-----BEGIN RSA PRIVATE KEY-----\n"),
    "base64 run": rep("aB3+"),
    "authorization spaces": `authorization:${rep(" ")}`,
    colons: rep("a:"),
    "keyword then one huge value": `password ${rep("aB3cD")}`,
    // Passwords on command lines and in words (src/core/secrets/command-line.ts, prose.ts).
    "password words": rep("password "),
    "password is runs": rep("the password is "),
    "password for the": rep("password for the db "),
    "flag p runs": rep("-p"),
    "mysql then -p runs": `mysql ${rep("-p-p ")}`,
    "sshpass -p runs": rep("sshpass -p "),
    "single quotes": `sshpass -p ${rep("'")}`,
    "double quotes": `mysql -p${rep('"')}`,
    "escaped quotes": `sshpass -p ${rep('\\"')}`,
    "ansi-c quotes": `sshpass -p ${rep("$'")}`,
    backslashes: `curl -u a:${rep("\\")}`,
    "unclosed quote then words": `sshpass -p "${rep("aB3 ")}`,
    "curl user colons": `curl -u ${rep("a:")}`,
    "echo pipes": rep("echo a | "),
    "use as runs": rep("use x as "),
    "set password to runs": rep("set the password to "),
    "passphrase words": `passphrase: ${rep("word ")}`,
    "net use backslashes": `net use Z: ${rep("\\")}`,
    "continuation lines": `docker login ${rep("\\\n ")}`,
    "here-string runs": rep("sudo -S <<<"),
    "fly secrets pairs": `fly secrets set ${rep("A=b ")}`,
    "quoted password options": `-o '${rep("a=b,")}`,
    "quoted password names": `-e "${rep("db_pass=")}`,
    "printf formats": rep("printf '%s' "),
    "echo escaped words": `echo ${rep("a\\ ")}`,
  };
}
