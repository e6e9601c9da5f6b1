/**
 * Identity sections (PUT /identity).
 */

/**
 * Largest identity section body accepted by PUT /identity (UTF-8 bytes).
 * Sections are injected verbatim into every session start; anything bigger
 * than a long style guide would crowd out the agent's context.
 */
export const IDENTITY_SECTION_MAX_BYTES = 256 * 1024;
