/** 256 random bits: guessing one is out of reach, and the SHA-256 of it is a safe lookup key (no salt needed). */
export const TOKEN_BYTES = 32;
/** Marks memsvc's member tokens in logs and secret scanners; not part of the secret's strength. */
export const TOKEN_PREFIX = "msv_";
/**
 * last_used_at is written at most this often per token and server: it is a
 * write, and a hook fires on every prompt. `token list` is exact to a minute.
 */
export const TOUCH_EVERY_MS = 60_000;
/** Longest --expires: beyond ten years a token is a forgotten password. */
export const MAX_EXPIRY_DAYS = 3650;
