import { createHash } from "node:crypto";

/**
 * Who a request counts against. Until tokens have names of their own, an
 * authenticated request counts against its token (hashed: the key is kept in
 * memory and never logged) and a refused one against its peer address, so
 * guessing with a new wrong token each time does not get a fresh allowance.
 * The per-member token code swaps this for the token's name.
 */
export type RateKeyOf = (who: { token: string | null; peer: string | null }) => string;

export const rateKeyOf: RateKeyOf = ({ token, peer }) =>
  token !== null ? `token:${createHash("sha256").update(token).digest("hex").slice(0, 32)}` : `peer:${peer ?? "in-process"}`;

/** Distinct keys kept at once: a flood from many addresses cannot grow the table without bound. */
const MAX_KEYS = 10_000;

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * A token bucket per key: `perMinute` requests at once, refilled at
 * perMinute/60 a second. A full bucket is the same as no entry, so idle keys
 * are dropped whenever the table fills up.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.perMinute > 0;
  }

  take(key: string): RateDecision {
    if (this.perMinute <= 0) return { ok: true };
    const now = this.now();
    const perMs = this.perMinute / 60_000;
    const b = this.buckets.get(key);
    const tokens = b ? Math.min(this.perMinute, b.tokens + (now - b.at) * perMs) : this.perMinute;
    if (tokens < 1) {
      if (b) (b.tokens = tokens), (b.at = now);
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)) };
    }
    if (!b && this.buckets.size >= MAX_KEYS) this.prune(now, perMs);
    this.buckets.set(key, { tokens: tokens - 1, at: now });
    return { ok: true };
  }

  /** Drops buckets that have refilled (no different from absent); if none has, the oldest half. */
  private prune(now: number, perMs: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (now - b.at) * perMs >= this.perMinute) this.buckets.delete(k);
    if (this.buckets.size < MAX_KEYS) return;
    let drop = Math.floor(this.buckets.size / 2);
    for (const k of this.buckets.keys()) {
      if (drop-- <= 0) break;
      this.buckets.delete(k);
    }
  }
}
