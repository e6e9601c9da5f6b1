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
    "colons": rep("a:"),
    "keyword then one huge value": `password ${rep("aB3cD")}`,
  };
}
