import type { EmbeddedNatives } from "./natives";

/**
 * Nothing is embedded when running from source: natives.ts then resolves
 * node_modules. build.ts swaps this module's source for generated
 * `import ... with { type: "file" }` lines of one platform's files, which is
 * what makes Bun embed them (and only them) in that platform's binary.
 */
export const embeddedNatives: EmbeddedNatives | null = null;
