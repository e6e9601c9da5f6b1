/**
 * Passwords said in words: "the root password is ...", "my password was
 * ...", "my password's ...", "passphrase: ...", "pw: ...", "the pin is 4821", "use X as the
 * password", "set the admin password to X", "log in with password X", and the
 * same for a secret or a token. Only the value goes; the sentence stays.
 *
 * What follows "password is" is as often a word about the password ("in
 * 1Password", "required", "expired", "4 digits long") as the password itself,
 * so every value passes a test: long enough, not a word or a hyphenated
 * phrase, not a variable, path, URL, version, date, size or algorithm name,
 * mixed enough (letters with digits or symbols; digits alone only for a PIN or
 * passcode, and never before a unit), and not a repeated placeholder (0000,
 * xxxx1). A secret or token must look generated: letters and digits, not a
 * kebab- or snake-case name.
 */
import { namesAValue } from "./shell";
import { PROSE_PASSPHRASE_MIN_WORDS, PROSE_PIN_MAX_DIGITS, PROSE_VALUE_MAX_CHARS, PROSE_VALUE_MIN_CHARS, PROSE_VALUE_MIN_ENTROPY } from "./tuning";
import { entropy, type SecretRule } from "./values";

const PASSWORD_WORDS = String.raw`pass(?:word|wd|phrase|code)|pass[ \t]phrase|pw|pwd|pin(?:[ \t]?(?:code|number))?`;
const SECRET_WORDS = String.raw`secret|token`;
const DETERMINER = String.raw`(?:(?:the|my|our|your|his|her|their|its|this|that|a|an)[ \t]+)`;
// "for the db", "to the admin panel", "on staging": the password's subject, a word or two.
const QUALIFIER = String.raw`(?:[ \t]+(?:for|of|on|to|at|in)[ \t]+${DETERMINER}?[^\s:=,.;!?"']{1,40}(?:[ \t]+[^\s:=,.;!?"']{1,40})?)?`;
const LINKING = String.raw`(?:[ \t]*[:=][ \t]*|['’]s[ \t]+|[ \t]+(?:is|was|will[ \t]+be|should[ \t]+be|would[ \t]+be|has[ \t]+been|had[ \t]+been|becomes|became|remains)(?:[ \t]+(?:now|still|just|currently|actually|simply|always|again))?(?:[ \t]+(?:set|changed|reset|updated)[ \t]+to)?[ \t]*:?[ \t]+|[ \t]+(?:set|changed|reset|updated)[ \t]+to[ \t]+)`;
// Quoted (any quotes, also JSON-escaped \"...\", spaces allowed) or one run of non-space that does not end in sentence punctuation.
const QUOTED = String.raw`\\"[^"\n]{1,128}\\"|"[^"\n]{1,128}"|'[^'\n]{1,128}'|\x60[^\x60\n]{1,128}\x60|“[^”\n]{1,128}”|‘[^’\n]{1,128}’`;
const VALUE = String.raw`(?<v>${QUOTED}|(?!\[REDACTED)[^\s"'\x60“”‘’]{0,127}[^\s"'\x60“”‘’.,;:?)\]}>])`;

// Words that say something about a password instead of being one (for quoted values; unquoted words never pass).
const STOP =
  /^(?:in|on|at|by|of|to|for|from|with|without|into|the|a|an|not|no|none|null|nil|empty|blank|missing|unset|set|required|optional|needed|mandatory|invalid|valid|expired|revoked|wrong|incorrect|correct|right|weak|strong|secure|insecure|long|short|same|different|changed|reset|rotated|stored|saved|kept|hidden|masked|redacted|hashed|encrypted|encoded|shared|sent|known|unknown|random|generated|provided|attached|below|above|here|there|fine|ok|okay|good|bad|true|false|yes|n\/a|na|tbd|todo|tba|string|password|passphrase|secret|token|pin|changeme|change me|your password|your token|<redacted>|hidden|none set|not set)$/i;
// Names with digits that are not credentials: products, algorithms, encodings, protocols, architectures.
const TECH =
  /^(?:1password|1pass|auth0|okta|base(?:16|32|58|64)(?:url)?|sha-?(?:1|224|256|384|512)|sha3-?\d+|md[245]|[hrep]s(?:256|384|512)|argon2(?:id|i|d)?|pbkdf2|scrypt|bcrypt|utf-?(?:8|16|32)|x\.?509|pkcs#?\d+|oauth-?[12](?:\.\d)?|ipv[46]|http\/?[123](?:\.\d)?|tls-?1\.[0-3]|sslv?[23]|aes-?(?:128|192|256)(?:-[a-z]+)?|rsa-?(?:1024|2048|3072|4096)|ed25519|ecdsa|p-?(?:256|384|521)|e2e|2fa|mfa|totp|hotp|fido2|webauthn|s3|ec2|k8s|i18n|l10n|a11y|x86_64|x86|x64|amd64|arm64|aarch64|i386|win32|win64|rot13|crc32|ucs-?2|latin-?1|iso-?8859-?\d+)$/i;
const UNIT =
  /^[ \t]*-?[ \t]*(?:digits?|characters?|chars?|letters?|numbers?|bytes?|bits?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|ms|s|m|h|d|times|tries|attempts|retries|words?|long|%|percent|x|kb|mb|gb|tokens?|lines?|rows?|items?|users?|requests?)\b/i;
const FUNCTION_WORDS =
  /^(?:the|a|an|in|on|at|of|to|for|from|by|with|is|are|was|were|be|it|its|this|that|and|or|not|no|see|ask|use|our|my|your|their|his|her|we|you|they|i|as|if|so)$/i;

const unquoteProse = (raw: string) => (/^\\"/.test(raw) ? raw.slice(2, -2).trim() : /^["'\x60“‘]/.test(raw) ? raw.slice(1, -1).trim() : raw);

/** The checks every value said in words passes, quoted or not. */
function plausible(v: string): boolean {
  return (
    v.length >= PROSE_VALUE_MIN_CHARS &&
    !/\$\{|\w\(.*\)/.test(v) && // code: a template literal's ${x}, a call f(x)
    v.length <= PROSE_VALUE_MAX_CHARS &&
    !STOP.test(v) &&
    !TECH.test(v) &&
    !namesAValue(v) &&
    !/(?:\.\.\.|…)/.test(v) &&
    entropy(v) >= PROSE_VALUE_MIN_ENTROPY
  );
}

/** Not a password: code, a link, an address, a path, a version, a date, a time, a size. */
function notAValue(v: string): boolean {
  return (
    /[(){}[\]<>]/.test(v) ||
    /^[a-z][a-z0-9+.-]*:\/\//i.test(v) ||
    /^[\w.+-]+@[\w-]+\.[\w.-]+$/.test(v) ||
    /^(?:~|\.{1,2})?\//.test(v) ||
    /^v?\d+(?:[.:/-]\d+)+[a-z]?$/i.test(v) ||
    /^\d+(?:\.\d+)?(?:[kmgt]i?b?|ms|s|m|h|d|x|%)$/i.test(v) ||
    /^!{1,2}[A-Za-z]+$/.test(v) || // a YAML tag: password: !vault |, secret: !Ref X
    wordLike(v)
  );
}

/** A word, CamelCase, a hyphenated phrase, a host name, or one made with a technical term (HS256-signed, db-creds-v2). */
function wordLike(v: string): boolean {
  return v.split(/[-_.'’/]+/).every((part) => part === "" || /^[A-Za-z]+$/.test(part) || TECH.test(part) || /^v\d{1,3}$/i.test(part));
}

/**
 * A password, passphrase, passcode or PIN said in words. `after` is the text
 * that follows: digits before a unit ("4 digits long", "3600 seconds") are a
 * number, not a PIN.
 */
export function passwordValue(raw: string, after: string): boolean {
  const quoted = raw !== unquoteProse(raw);
  const v = unquoteProse(raw);
  if (!plausible(v)) return false;
  // A quoted sentence of small words is talk about the password ("in the vault"), not one.
  if (quoted) return !(v.split(/\s+/).length >= 3 && v.split(/\s+/).some((w) => FUNCTION_WORDS.test(w)));
  if (/^\d+$/.test(v)) return v.length <= PROSE_PIN_MAX_DIGITS && !UNIT.test(after);
  return !notAValue(v);
}

/** A secret or token said in words: it must look generated (letters and digits, not a versioned, kebab-case or snake_case name). */
export function secretValue(raw: string): boolean {
  const quoted = raw !== unquoteProse(raw);
  const v = unquoteProse(raw);
  if (!plausible(v) || /\s/.test(v) || v.length < 6) return false;
  if (!quoted && notAValue(v)) return false;
  if (!(/[A-Za-z]/.test(v) && /\d/.test(v))) return false;
  // Not a name with a version (python3, gpt4, node18) nor a kebab-case or snake_case name.
  return !/^[A-Za-z]+\d{1,3}$/.test(v) && !/^[a-z]+(?:[-_.][a-z0-9]+)+$/.test(v);
}

/** "correct horse battery staple" after "passphrase:": four or more words, none a function word. */
function passphraseWords(v: string): boolean {
  const words = v.trim().split(/[ \t]+/);
  return words.length >= PROSE_PASSPHRASE_MIN_WORDS && !words.some((w) => FUNCTION_WORDS.test(w));
}

// Every rule here needs one of the keywords as a word: one scan for it skips all six on a text without.
const NEEDLE = new RegExp(String.raw`\b(?:${PASSWORD_WORDS}|${SECRET_WORDS})\b`, "i");

const rule = (kind: string, source: string, accept: (v: string, match: string, after: string) => boolean, flags = "gi"): SecretRule => ({
  kind,
  pattern: new RegExp(source, flags),
  needle: NEEDLE,
  group: "v",
  accept,
});

export const PROSE_RULES: SecretRule[] = [
  // "the root password for staging is X", "password: X", "pw = X", "the pin is 4821", "passcode: X".
  rule("password", String.raw`\b(?:${PASSWORD_WORDS})\b${QUALIFIER}${LINKING}${VALUE}`, (v, _m, after) => passwordValue(v, after)),
  // "the deploy token is X", "client secret: X".
  rule("secret", String.raw`\b(?:${SECRET_WORDS})\b${QUALIFIER}${LINKING}${VALUE}`, (v) => secretValue(v)),
  // "use X as the password", "try X as the admin pin" (as the token or secret: X must look generated).
  rule(
    "password",
    String.raw`\b(?:use|used|using|try|tried|enter|entered|type|typed|pick|picked|chose|choose)[ \t]+(?<v>${QUOTED}|[^\s"'\x60]{1,128})[ \t]+as[ \t]+${DETERMINER}?(?:[\w-]{1,30}[ \t]+)?(?:${PASSWORD_WORDS}|${SECRET_WORDS})\b`,
    (v, match, after) => (new RegExp(String.raw`(?:${SECRET_WORDS})$`, "i").test(match) ? secretValue(v) : passwordValue(v, after)),
  ),
  // "set the admin password to X", "changed my pin to X".
  rule(
    "password",
    String.raw`\b(?:set|sets|setting|change|changed|changes|changing|reset|resets|update|updated|updates)[ \t]+${DETERMINER}?(?:[\w@.'’-]{1,30}[ \t]+){0,2}?(?:${PASSWORD_WORDS})[ \t]+(?:to|as)[ \t]+(?:be[ \t]+)?${VALUE}`,
    (v, _m, after) => passwordValue(v, after),
  ),
  // "log in with password X", "using the pin X", "use password X".
  rule("password", String.raw`\b(?:with|using|via|use)[ \t]+${DETERMINER}?(?:[\w-]{1,30}[ \t]+)?(?:${PASSWORD_WORDS})[ \t]+${VALUE}`, (v, _m, after) =>
    passwordValue(v, after),
  ),
  // "passphrase: correct horse battery staple" (unquoted words, to the line's end or a closing quote).
  rule(
    "password",
    String.raw`\bpass[ \t]?phrase[ \t]*[:=][ \t]*(?<v>[A-Za-z]+(?:[ \t]+[A-Za-z]+){3,11})(?=[ \t]*[.,;!]?[ \t]*(?:\\*["'\x60]|$))`,
    (v) => passphraseWords(v),
    "gim",
  ),
];
