/**
 * Secret redaction: the entropy floors of the keyword and bare-key rules (rules.ts) and the
 * constants of the command-line and prose password rules (command-line.ts, prose.ts).
 */

/**
 * Least Shannon entropy (bits a character) of a mixed-case-and-digit string of 16+ characters
 * after a word like secret or token (KEYWORD), and of a bare 40-character AWS-style secret (BARE):
 * no ordinary line matched from 2.5 to 4.5; keyword takes the highest that keeps every case.
 * See docs/decisions/secret-redaction.md.
 */
export const REDACT_KEYWORD_SECRET_MIN_ENTROPY = 3.5;
export const REDACT_BARE_SECRET_MIN_ENTROPY = 4;

/**
 * How far (characters) a password flag may stand from its command's name:
 * `mysql -h db.internal -P 3307 -u report ... -p<password>`. A long docker or curl line
 * with a dozen options fits; the cap keeps every scan linear.
 */
export const CLI_ARGS_MAX_CHARS = 256;

/**
 * Shortest password said in words that is taken for one: a 4-digit PIN is
 * the shortest real secret people give in a prompt; three characters after
 * "pw:" or two digits after "the token is" are not worth a marker and often
 * not a secret.
 */
export const PROSE_VALUE_MIN_CHARS = 4;
/** Longest one: a sentence after "the password is" is not a password. */
export const PROSE_VALUE_MAX_CHARS = 128;

/**
 * Least Shannon entropy (bits per character) of a password said in words:
 * "0000", "xxxx1", "aaaa" are placeholders, not passwords; "1234" (2 bits) and
 * "hunter2" (2.5) are real if weak. Every positive of the password corpus
 * (test/fixtures/secrets/password-forms.ts) clears 1.5; the placeholders of
 * its near misses do not.
 */
export const PROSE_VALUE_MIN_ENTROPY = 1.5;

/** Digits-only values (PINs, numeric passcodes) are taken from 4 to this many digits; longer runs are ids and timestamps. */
export const PROSE_PIN_MAX_DIGITS = 12;

/**
 * Words of a passphrase given unquoted after "passphrase:" ("correct horse
 * battery staple"): at least this many, none a function word.
 */
export const PROSE_PASSPHRASE_MIN_WORDS = 4;
