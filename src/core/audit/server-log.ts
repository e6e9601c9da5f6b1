import type { Services } from "../services";
import { AuditLog } from "./audit";

/** The server's audit writer (one per Services, in its state: batches rows off the request path). */
export function auditLog(s: Services): AuditLog {
  const st = s.state;
  // The root's storage: an entry written from inside a transaction must not roll back with it.
  st.audit ??= new AuditLog(st.root.storage.audit, { retentionDays: s.config.audit.retentionDays, now: () => s.now(), log: (level, m) => s.log(level, m) });
  return st.audit;
}

/** Writes queued audit rows (shutdown). */
export async function flushAudit(s: Services): Promise<void> {
  await s.state.audit?.flush();
}
