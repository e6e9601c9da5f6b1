import { eq, ne, sql } from "drizzle-orm";
import type { IdentityStore, StoredSection } from "../../core/identity";
import type { PgHandle } from "./open";

/** The global scope's key in identity_sections.scope; agent ids never are empty. */
const GLOBAL = "";

/**
 * identity/ on PostgreSQL: the sections live in identity_sections, so every
 * server over the database reads what any of them wrote (each server has its
 * own home, whose identity folder is not used here). `memsvc migrate` copies
 * a laptop's identity files in.
 */
export function pgIdentity(h: PgHandle): IdentityStore {
  const { orm, t } = h;
  const table = t.identitySections;
  // Storage gates only a store's own methods on h.ready(); these are one level down.
  const ready = () => (h.inTransaction ? Promise.resolve() : h.ready());
  return {
    sections: {
      async readScope(agent) {
        await ready();
        const rows = await orm
          .select({ name: table.name, body: table.body, updatedAt: table.updatedAt })
          .from(table)
          .where(eq(table.scope, agent ?? GLOBAL))
          .orderBy(sql`${table.name} COLLATE "C"`);
        return new Map(rows.map((r): [string, StoredSection] => [r.name, { body: r.body, mtimeMs: r.updatedAt }]));
      },
      async agentScopes() {
        await ready();
        const rows = await orm.selectDistinct({ scope: table.scope }).from(table).where(ne(table.scope, GLOBAL));
        // Code-point order, as the folder listing sorts.
        return rows.map((r) => r.scope).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      },
      async hasAgentScope(agent) {
        await ready();
        const rows = await orm.select({ one: sql<number>`1` }).from(table).where(eq(table.scope, agent)).limit(1);
        return rows.length > 0;
      },
      async writeSections(agent, sections, at) {
        if (sections.length === 0) return;
        await ready();
        // One statement: every section of the PUT lands, or none does.
        await orm
          .insert(table)
          .values(sections.map(([name, body]) => ({ scope: agent ?? GLOBAL, name, body, updatedAt: at })))
          .onConflictDoUpdate({ target: [table.scope, table.name], set: { body: sql`excluded.body`, updatedAt: sql`excluded.updated_at` } });
      },
    },
  };
}
