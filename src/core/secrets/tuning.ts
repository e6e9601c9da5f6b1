/**
 * Secret redaction (rules.ts).
 */

/**
 * Least Shannon entropy (bits a character) of a mixed-case-and-digit string of 16+ characters
 * after a word like secret or token (KEYWORD), and of a bare 40-character AWS-style secret (BARE):
 * no ordinary line matched from 2.5 to 4.5; keyword takes the highest that keeps every case.
 * See docs/decisions/secret-redaction.md.
 */
export const REDACT_KEYWORD_SECRET_MIN_ENTROPY = 3.5;
export const REDACT_BARE_SECRET_MIN_ENTROPY = 4;
