import { DECAY_FLOOR, DECAY_HALF_LIFE_DAYS, MAX_STRENGTH, USE_BOOST } from "./tuning";

const DAY_MS = 86_400_000;

/** Decayed strength: halves every DECAY_HALF_LIFE_DAYS since the decay clock was last refreshed. */
export function effectiveStrength(strength: number, refreshedAt: number, now = Date.now()): number {
  const days = Math.max(0, now - refreshedAt) / DAY_MS;
  const decay = 0.5 ** (days / DECAY_HALF_LIFE_DAYS);
  return strength * (DECAY_FLOOR + (1 - DECAY_FLOOR) * decay);
}

// The same formula as SQL lives with each engine (src/store/sqlite/strength.ts).

export function strengthenedOnUse(strength: number): number {
  return Math.min(MAX_STRENGTH, strength + USE_BOOST);
}

export const round3 = (x: number) => Math.round(x * 1000) / 1000;
