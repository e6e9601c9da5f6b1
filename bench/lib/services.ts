import type { Config } from "../../src/config";
import { createServices, type ServiceOptions, type Services } from "../../src/core/services";
import { openStorage } from "../../src/store/open";
import type { Store } from "../../src/store/sqlite/open";

/** Services on the configured store, with the raw SQLite handle for benches that time SQL directly (null on PostgreSQL). */
export function benchServices(config: Config, opts: ServiceOptions): Services & { sqlite: Store | null } {
  let sqlite: Store | null = null;
  const storage = openStorage(config, { sqliteHandle: (h) => (sqlite = h) });
  return Object.assign(createServices(config, storage, opts), { sqlite: sqlite as Store | null });
}

/** The raw SQLite handle of a bench's services (benches seed and time SQLite). */
export function sqliteOf(s: { sqlite: Store | null }): Store {
  if (!s.sqlite) throw new Error('this bench needs storage "sqlite"');
  return s.sqlite;
}
