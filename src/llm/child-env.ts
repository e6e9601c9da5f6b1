/**
 * Set in a harness CLI's environment when memsvc runs it as its language
 * model. The harness runs its hooks in headless mode too (Claude Code's
 * SessionStart/SessionEnd, Codex's notify, Gemini CLI's hooks): `memsvc hook`
 * sees this and does nothing, so a distill call neither gets memories
 * injected nor is captured and distilled again, which would loop. Its own
 * small module: the hook must not load the client to read it.
 */
export const LLM_CHILD_ENV = "MEMSVC_LLM_CHILD";
