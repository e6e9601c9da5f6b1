import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { homedir } from "node:os";
import { VERSION } from "./version";

/**
 * Inside a compiled binary, embedded files live under /$bunfs, which native
 * loaders (dlopen, sqlite3_load_extension) cannot open. Copy such a file once
 * to a real cache folder (temp name + rename, so a concurrent start never sees
 * half a library) and return that path; a path on disk is returned as is.
 */
export function materialize(embeddedPath: string, fileName: string): string {
  if (!embeddedPath.startsWith("/$bunfs") && !embeddedPath.startsWith("B:/~BUN")) return embeddedPath;
  const cacheRoot = process.env.MEMSVC_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "memsvc");
  const dir = join(cacheRoot, VERSION);
  const target = join(dir, fileName);
  const size = Bun.file(embeddedPath).size;
  if (existsSync(target) && statSync(target).size === size) return target;
  mkdirSync(dir, { recursive: true });
  const temp = `${target}.${process.pid}.tmp`;
  // copyFileSync fails with ENOENT on /$bunfs paths (Bun 1.4.5); reading them works.
  writeFileSync(temp, readFileSync(embeddedPath));
  renameSync(temp, target);
  return target;
}
