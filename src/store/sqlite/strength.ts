import { DECAY_FLOOR, DECAY_HALF_LIFE_DAYS } from "../../core/memories/tuning";

const DAY_MS = 86_400_000;

/**
 * effectiveStrength (src/core/memories/strength.ts) as SQLite SQL, for
 * rankings computed inside the database (`:now` bound). Keep the two in step.
 */
export function effectiveStrengthSql(strength = "strength", refreshedAt = "refreshed_at"): string {
  return `(${strength} * (${DECAY_FLOOR} + ${1 - DECAY_FLOOR} * pow(0.5, max(0, (:now - ${refreshedAt})) / ${DAY_MS * DECAY_HALF_LIFE_DAYS}.0)))`;
}
