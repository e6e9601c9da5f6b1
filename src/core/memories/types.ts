import { invalid } from "../../errors";

export const MEMORY_TYPES = ["knowledge", "experience", "decisions", "learnings"] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

// Values of earlier releases, still accepted on input and stored as the current name.
const LEGACY: Record<string, MemoryType> = {
  episode: "experience",
  lesson: "learnings",
  fact: "knowledge",
  decision: "decisions",
};

/** Current type for any accepted value (case-insensitive); 400 for anything else. */
export function normalizeMemoryType(value: unknown, field = "memory_type"): MemoryType {
  if (typeof value !== "string") throw invalid(`${field} must be a string`);
  const v = value.trim().toLowerCase();
  if ((MEMORY_TYPES as readonly string[]).includes(v)) return v as MemoryType;
  // Own keys only: "__proto__" or "constructor" must not find Object.prototype's members.
  const mapped = Object.hasOwn(LEGACY, v) ? LEGACY[v] : undefined;
  if (mapped) return mapped;
  throw invalid(`${field} must be one of ${MEMORY_TYPES.join(", ")} (legacy: ${Object.keys(LEGACY).join(", ")}), got "${value.slice(0, 40)}"`);
}
