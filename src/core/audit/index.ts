export type { AuditStore } from "./store";
export { AuditLog, readAudit } from "./audit";
export { auditLog, flushAudit } from "./server-log";
