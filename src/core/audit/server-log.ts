import type { Services } from "../services";
import { AuditLog } from "./audit";

const audits = new WeakMap<Services, AuditLog>();

/** The server's audit writer (one per Services: batches rows off the request path). */
export function auditLog(s: Services): AuditLog {
  let a = audits.get(s);
  if (!a) {
    a = new AuditLog(s.storage.audit, { retentionDays: s.config.audit.retentionDays, now: () => s.now(), log: (level, m) => s.log(level, m) });
    audits.set(s, a);
  }
  return a;
}

/** Writes queued audit rows (shutdown). */
export async function flushAudit(s: Services): Promise<void> {
  await audits.get(s)?.flush();
}

