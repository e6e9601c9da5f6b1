export type { AuditEntry, AuditFilter, AuditStore } from "./store";
export type { AuditLogOptions, AuditQuery } from "./audit";
export { AuditLog, readAudit } from "./audit";
export { auditLog, flushAudit } from "./server-log";
