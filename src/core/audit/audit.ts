import { invalid } from "../../errors";
import type { AuditEntry, AuditFilter, AuditStore } from "./store";
import { AUDIT_FLUSH_MS, AUDIT_MAX_ROWS, AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX, AUDIT_PRUNE_EVERY_MS, AUDIT_REFUSALS_PER_MINUTE } from "./tuning";

export interface AuditLogOptions {
  retentionDays: number;
  now: () => number;
  log?: (level: "warn" | "error", message: string) => void;
}

/**
 * The server's audit writer: entries are queued and written in batches off
 * the request path (an audit row must not cost a search its latency), and
 * refused authentications are rate-limited per peer.
 */
export class AuditLog {
  private queue: AuditEntry[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private prunedAt = 0;
  private refusals = new Map<string, { minute: number; logged: number; suppressed: number }>();

  constructor(
    private readonly store: AuditStore,
    private readonly opts: AuditLogOptions,
  ) {}

  record(e: Omit<AuditEntry, "at"> & { at?: number }): void {
    this.queue.push({ ...e, at: e.at ?? this.opts.now() });
    this.timer ??= setTimeout(() => void this.flush(), AUDIT_FLUSH_MS);
  }

  /** A refused authentication: logged up to the per-minute allowance of its peer, counted beyond it. */
  refused(peer: string | null, reason: string, name?: string): void {
    const now = this.opts.now();
    const minute = Math.floor(now / 60_000);
    const key = peer ?? "-";
    let r = this.refusals.get(key);
    if (!r || r.minute !== minute) {
      if (r && r.suppressed > 0)
        this.record({ actor: "-", action: "auth.refused.suppressed", target: null, detail: JSON.stringify({ count: r.suppressed }), peer: key });
      r = { minute, logged: 0, suppressed: 0 };
      this.refusals.set(key, r);
      // Peers of earlier minutes with nothing suppressed need no entry: keep the map small under a spray of addresses.
      if (this.refusals.size > 10_000) for (const [k, v] of this.refusals) if (v.minute !== minute && v.suppressed === 0) this.refusals.delete(k);
    }
    if (r.logged < AUDIT_REFUSALS_PER_MINUTE) {
      r.logged++;
      this.record({ actor: name ?? "-", action: "auth.refused", target: null, detail: reason, peer });
    } else r.suppressed++;
  }

  /** Writes what is queued (and prunes, at most hourly). Shutdown awaits it. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.queue;
    this.queue = [];
    this.flushing = this.flushing.then(async () => {
      try {
        if (batch.length) await this.store.append(batch);
        const now = this.opts.now();
        if (now - this.prunedAt >= AUDIT_PRUNE_EVERY_MS) {
          this.prunedAt = now;
          await this.store.prune(now - this.opts.retentionDays * 86_400_000, AUDIT_MAX_ROWS);
        }
      } catch (e) {
        this.opts.log?.("error", `audit: ${batch.length} entries not written: ${(e as Error).message}`);
      }
    });
    return this.flushing;
  }
}

export interface AuditQuery {
  actor?: unknown;
  action?: unknown;
  since?: unknown;
  until?: unknown;
  before?: unknown;
  limit?: unknown;
}

const time = (v: unknown, name: string): number | undefined => {
  if (v === undefined || v === "") return undefined;
  const t = typeof v === "number" ? v : Date.parse(String(v));
  if (!Number.isFinite(t)) throw invalid(`${name} must be a date (YYYY-MM-DD) or an ISO time`);
  return t;
};

const str = (v: unknown, name: string): string | undefined => {
  if (v === undefined || v === "") return undefined;
  if (typeof v !== "string" || v.length > 200) throw invalid(`${name} must be a string of at most 200 characters`);
  return v;
};

/** GET /audit and `memsvc audit`: newest first; `next_before` pages on. */
export async function readAudit(store: AuditStore, q: AuditQuery) {
  const limit = q.limit === undefined || q.limit === "" ? AUDIT_PAGE_DEFAULT : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE_MAX) throw invalid(`limit must be an integer from 1 to ${AUDIT_PAGE_MAX}`);
  const before = q.before === undefined || q.before === "" ? undefined : Number(q.before);
  if (before !== undefined && (!Number.isInteger(before) || before < 1)) throw invalid("before must be a positive integer (next_before of the previous page)");
  const filter: AuditFilter = {
    actor: str(q.actor, "actor"),
    action: str(q.action, "action"),
    since: time(q.since, "since"),
    until: time(q.until, "until"),
    before,
    limit,
  };
  const rows = await store.list(filter);
  return {
    entries: rows.map((r) => ({
      id: r.id,
      at: new Date(r.at).toISOString(),
      actor: r.actor,
      action: r.action,
      target: r.target,
      detail: r.detail,
      peer: r.peer,
    })),
    next_before: rows.length === limit ? rows[rows.length - 1].id : null,
  };
}
