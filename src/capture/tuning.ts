/**
 * The capture client (memsvc capture, memsvc hook): local denoising without a model, hook budgets.
 */

/** A tool call is kept as a one-line summary of at most this many characters (command, path, pattern). */
export const CAPTURE_TOOL_INPUT_CHARS = 200;

/** Head of a tool result kept: enough for "file not found" or a test summary, not the file itself. */
export const CAPTURE_TOOL_OUTPUT_CHARS = 300;

/** Failed tool results keep more: the error is often the lesson. */
export const CAPTURE_TOOL_ERROR_CHARS = 800;

/** A human or agent message longer than this is pasted bulk: its head and tail are kept. */
export const CAPTURE_MESSAGE_MAX_CHARS = 8000;

/** A delta bigger than this (denoised characters) is shipped as several segments. */
export const CAPTURE_SEGMENT_MAX_CHARS = 40_000;

/**
 * Hard wall-clock budget of each `memsvc hook` event (ms), after which it
 * exits silently. The prompt hook runs before the agent sees every prompt:
 * with ~100 ms of process start it stays under 1 s.
 */
export const HOOK_BUDGET_MS = { "user-prompt": 700, "session-start": 2500, "pre-compact": 1500, "session-end": 1500, "codex-notify": 1500 } as const;

/**
 * Share of the session-start hook's budget (HOOK_BUDGET_MS) for the staleness check: git calls take
 * ~5 ms an anchored commit, so 1.2 s covers hundreds; the rest waits for the next start or `memsvc stale`.
 */
export const STALE_HOOK_BUDGET_MS = 1200;

/**
 * Use detection (use.ts): a shown memory counts as used when at least this many of its cues (terms
 * the prompt did not hold) come back in the agent's following turns, one of them strong (an
 * identifier, path, number or flag)...
 */
export const USE_MIN_CUES = 2;

/** ...or, for a memory of plain words, this many of them making at least this share of its cues. */
export const USE_MIN_WORD_CUES = 3;
export const USE_WORD_CUE_SHARE = 0.3;
