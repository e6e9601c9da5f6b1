/**
 * The language model client's health probe.
 */

/** GET /health/llm (memsvc doctor): a local model answers a 20-token request in well under a second; a cold one may need to load first. */
export const LLM_PROBE_TIMEOUT_MS = 15_000;
