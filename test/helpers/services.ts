import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Config } from "../../src/config";
import type { Logger } from "../../src/core/log";
import { createServices, type Services } from "../../src/core/services";
import { openStorage } from "../../src/store/open";
import type { Store } from "../../src/store/sqlite/open";
import { FallbackEmbedder } from "../../src/embed/fallback";
import type { Embedder } from "../../src/embed/types";
import { engineConfig, engineEnv, rememberSqlite, sqliteStoreOf } from "./engine";
import { hashToken, type TokensStore } from "../../src/core/tokens";

export const TEST_TOKEN = "test-token-0123456789abcdef";

export interface TestServicesOptions {
  /** Extra config.json keys (merged over a token). */
  config?: Record<string, unknown>;
  embedder?: Embedder;
  now?: () => number;
  /** Reuse an existing home (e.g. to test restarts). */
  home?: string;
  env?: Record<string, string>;
  indexBackgroundAbove?: number;
}

export interface TestServices extends Services {
  logs: { level: string; message: string }[];
  /** The raw SQLite handle (SQLite runs only: reading it on PostgreSQL throws). */
  readonly store: Store;
}

/**
 * A fresh home in a temp folder with a real store (a SQLite file, or with
 * MEMSVC_TEST_ENGINE=postgres a fresh schema in the test PostgreSQL database), a
 * config and the fast offline embedder.
 */
export function makeServices(opts: TestServicesOptions = {}): TestServices {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), "memsvc-home-"));
  mkdirSync(home, { recursive: true });
  // A test that names its storage gets it; every other store is on the test engine.
  const pinned = opts.config !== undefined && "storage" in opts.config;
  if (!opts.home || opts.config)
    writeFileSync(join(home, "config.json"), JSON.stringify({ token: TEST_TOKEN, ...(pinned ? {} : engineConfig(home)), ...opts.config }));
  // The environment too: a reused home's config.json may come from elsewhere (memsvc init).
  const config: Config = loadConfig({ ...(pinned ? {} : engineEnv(home)), ...opts.env, MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" });
  const logs: { level: string; message: string }[] = [];
  const log: Logger = (level, message) => logs.push({ level, message });
  let sqlite: Store | null = null;
  const storage = openStorage(config, { sqliteHandle: (store) => (sqlite = store) });
  if (sqlite) rememberSqlite(storage, sqlite);
  const services = createServices(config, storage, {
    embedder: opts.embedder ?? new FallbackEmbedder(),
    log,
    now: opts.now,
    indexBackgroundAbove: opts.indexBackgroundAbove,
  }) as TestServices;
  services.logs = logs;
  Object.defineProperty(services, "store", { get: () => sqliteStoreOf(services) });
  if (services.storage.engine === "postgres") seedConfigToken(services, config.token ?? TEST_TOKEN);
  return services;
}

/**
 * On PostgreSQL only tokens in the database authenticate (issue 36): the
 * tests' config token is stored there too, as an admin, so tests written
 * against the config token run on both engines. Lookups wait for the insert.
 */
function seedConfigToken(s: Services, token: string): void {
  const tokens = s.storage.tokens as { -readonly [K in keyof TokensStore]: TokensStore[K] };
  const byHash = tokens.byHash;
  const seeded = tokens
    .insert({
      name: "test-config",
      hash: hashToken(token),
      role: "admin",
      projects: null,
      createdAt: Date.now(),
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
    })
    .catch(() => false);
  tokens.byHash = async (hash) => (await seeded, byHash(hash));
}
