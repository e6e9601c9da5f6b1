import type { Services } from "../services";
import type { RecallExpiry } from "./store";
import { RECALL_ONE_TURN_SESSION_TTL_DAYS, RECALL_SESSION_TTL_DAYS, RECALL_SESSIONS_MAX } from "./tuning";

const DAY_MS = 86_400_000;

/** The expiry policy as of now: see expireRecallSessions. */
export function sessionExpiry(s: Services, max = RECALL_SESSIONS_MAX): RecallExpiry {
  const now = s.now();
  return { idleBefore: now - RECALL_SESSION_TTL_DAYS * DAY_MS, oneTurnIdleBefore: now - RECALL_ONE_TURN_SESSION_TTL_DAYS * DAY_MS, max };
}

/**
 * Bounds the recall state (sessions with their shown rows and topics):
 * sessions idle RECALL_SESSION_TTL_DAYS go, single-prompt sessions after
 * RECALL_ONE_TURN_SESSION_TTL_DAYS, and past RECALL_SESSIONS_MAX the least
 * recently used. Runs when a session starts (inside its turn's transaction)
 * and in the nightly prune. Returns how many sessions were (or, with dryRun,
 * would be) dropped.
 */
export function expireRecallSessions(s: Services, opts: { dryRun?: boolean; max?: number } = {}): Promise<number> {
  return s.storage.recall.expireSessions(sessionExpiry(s, opts.max), opts.dryRun === true);
}
