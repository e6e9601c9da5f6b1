import { existsSync } from "node:fs";
import type { Config } from "../config";
import type { Logger } from "../core/log";
import { createServices, type Services } from "../core/services";
import type { Storage } from "../core/storage";
import { loadEmbedder } from "../embed";
import { AppError } from "../errors";
import { openStorage } from "../store/open";
import { UsageError } from "./args";

/** The configured store for a command that needs no embedder (export, backup, tokens, audit). */
export async function openConfigured(config: Config): Promise<Storage> {
  if (config.storage === "sqlite" && !existsSync(config.paths.db)) throw new UsageError(`no database at ${config.paths.db}`);
  const storage = openStorage(config, { pool: 2 });
  // Connect now (PostgreSQL): an unreachable database is one clear line, before any file is written.
  await storage.ready();
  return storage;
}

/**
 * Runs `fn` on the configured store and closes it; `fn`'s number is the exit code (0 when it
 * returns none). A failure the operator can fix (unreachable database, existing file) is one line and exit 1.
 */
export async function withStorage(command: string, config: Config, fn: (storage: Storage) => Promise<unknown>): Promise<number> {
  let storage: Storage | null = null;
  try {
    storage = await openConfigured(config);
    const code = await fn(storage);
    return typeof code === "number" ? code : 0;
  } catch (e) {
    if (e instanceof AppError) {
      console.error(`memsvc ${command}: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    await storage?.close();
  }
}

/** Services with the configured embedder, for the commands that embed (import). */
export async function openServices(config: Config, log: Logger): Promise<Services> {
  const embedder = await loadEmbedder({
    home: config.home,
    model: config.embedder.model,
    offline: config.offline,
    hubUrl: config.embedder.hubUrl ?? undefined,
    log: (l) => log("info", l),
  });
  return createServices(config, openStorage(config), { embedder, log });
}
