import { afterEach, describe, expect, test } from "bun:test";
import { AuditLog, readAudit } from "../../../../src/core/audit";
import { AUDIT_REFUSALS_PER_MINUTE } from "../../../../src/core/audit/tuning";
import { makeServices, type TestServices } from "../../../helpers/services";

const open: TestServices[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

describe("audit log", () => {
  test("a flood of refused authentications costs a few rows a minute, and says how many it left out", async () => {
    const s = makeServices();
    open.push(s);
    const clock = { t: Date.parse("2026-03-01T10:00:10Z") };
    const log = new AuditLog(s.storage.audit, { retentionDays: 90, now: () => clock.t });
    for (let i = 0; i < 5000; i++) log.refused("203.0.113.9", "unknown");
    log.refused("198.51.100.1", "missing");
    clock.t += 60_000;
    log.refused("203.0.113.9", "unknown");
    await log.flush();
    const rows = (await readAudit(s.storage.audit, { limit: 1000 })).entries;
    const fromFlood = rows.filter((r) => r.peer === "203.0.113.9");
    expect(fromFlood.filter((r) => r.action === "auth.refused").length).toBe(AUDIT_REFUSALS_PER_MINUTE + 1);
    expect(fromFlood.filter((r) => r.action === "auth.refused.suppressed").map((r) => JSON.parse(r.detail!).count)).toEqual([5000 - AUDIT_REFUSALS_PER_MINUTE]);
    expect(rows.filter((r) => r.peer === "198.51.100.1").length).toBe(1);
  });

  test("entries older than the retention are pruned; filters and paging", async () => {
    const s = makeServices({ config: { audit: { retentionDays: 7 } } });
    open.push(s);
    expect(s.config.audit.retentionDays).toBe(7);
    const day = 86_400_000;
    const now = Date.parse("2026-03-10T00:00:00Z");
    await s.storage.audit.append([
      { at: now - 30 * day, actor: "old", action: "memory.deleted", target: "a", detail: null, peer: null },
      ...Array.from({ length: 5 }, (_, i) => ({
        at: now - i * 1000,
        actor: i % 2 ? "dana" : "lee",
        action: i % 2 ? "memory.created" : "token.created",
        target: `t${i}`,
        detail: null,
        peer: "10.0.0.1",
      })),
    ]);
    const log = new AuditLog(s.storage.audit, { retentionDays: s.config.audit.retentionDays, now: () => now });
    log.record({ actor: "x", action: "memory.changed", target: null, detail: null, peer: null });
    await log.flush();
    const all = (await readAudit(s.storage.audit, { limit: 100 })).entries;
    expect(all.some((r) => r.actor === "old")).toBe(false);
    expect(all.length).toBe(6);
    expect((await readAudit(s.storage.audit, { actor: "dana" })).entries.map((r) => r.target)).toEqual(["t3", "t1"]);
    expect((await readAudit(s.storage.audit, { action: "memory." })).entries.length).toBe(3);
    const first = await readAudit(s.storage.audit, { limit: 4 });
    const second = await readAudit(s.storage.audit, { limit: 4, before: first.next_before });
    expect(first.entries.length + second.entries.length).toBe(6);
    expect(second.next_before).toBeNull();
    await expect(readAudit(s.storage.audit, { limit: 0 })).rejects.toThrow("limit must be an integer");
    await expect(readAudit(s.storage.audit, { since: "yesterday-ish" })).rejects.toThrow("since must be a date");
  });
});
