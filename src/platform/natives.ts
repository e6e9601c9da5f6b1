import { Database } from "bun:sqlite";
import { dlopen } from "bun:ffi";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { materialize } from "../native";
import { embeddedNatives } from "./embedded-natives";

/**
 * Where every platform gets its native code: the one table to read.
 *
 * - sqlite-vec: the vector store, a loadable SQLite extension from the
 *   platform package `sqlite-vec-<os>-<cpu>` (an optional dependency of
 *   `sqlite-vec`; npm installs only the running platform's one).
 * - onnxruntime: the ONNX embedder's N-API binding plus the shared library it
 *   links against. onnxruntime-node ships every platform's files inside its
 *   one package (bin/napi-v6/<os>/<arch>/). Version 1.30 has no darwin/x64
 *   build, so that binary embeds none and uses the offline embedder.
 * - customSqlite: macOS's system SQLite refuses to load extensions, so darwin
 *   gets its own libsqlite3.dylib, cross-built by build.ts with Zig and handed
 *   to bun:sqlite with Database.setCustomSQLite before the first open.
 *
 * From source these resolve in node_modules (and the build cache for the
 * darwin SQLite); in a compiled binary build.ts generates
 * ./embedded-natives.ts with file imports of exactly one row's files.
 */
export type PlatformId = "linux-x64" | "linux-arm64" | "darwin-arm64" | "darwin-x64" | "windows-x64";

export interface PlatformNatives {
  id: PlatformId;
  /** process.platform / process.arch of a machine this row serves. */
  os: "linux" | "darwin" | "win32";
  arch: "x64" | "arm64";
  /** Bun's --target for the compiled binary. */
  bunTarget: string;
  /** File name of the release binary in dist/. */
  binary: string;
  sqliteVec: { package: string; file: string };
  /** Folder under node_modules/onnxruntime-node, the binding, and the libraries it links (loaded in this order). */
  onnxruntime: { dir: string; binding: string; libraries: string[] } | null;
  /** A SQLite library that allows extensions, built with `zig cc -target <zigTarget>`. */
  customSqlite: { zigTarget: string; file: string } | null;
}

const ORT = "bin/napi-v6";
const BINDING = "onnxruntime_binding.node";

export const PLATFORMS: Record<PlatformId, PlatformNatives> = {
  "linux-x64": {
    id: "linux-x64",
    os: "linux",
    arch: "x64",
    bunTarget: "bun-linux-x64",
    binary: "memsvc-linux-x64",
    sqliteVec: { package: "sqlite-vec-linux-x64", file: "vec0.so" },
    onnxruntime: { dir: `${ORT}/linux/x64`, binding: BINDING, libraries: ["libonnxruntime.so.1"] },
    customSqlite: null,
  },
  "linux-arm64": {
    id: "linux-arm64",
    os: "linux",
    arch: "arm64",
    bunTarget: "bun-linux-arm64",
    binary: "memsvc-linux-arm64",
    sqliteVec: { package: "sqlite-vec-linux-arm64", file: "vec0.so" },
    onnxruntime: { dir: `${ORT}/linux/arm64`, binding: BINDING, libraries: ["libonnxruntime.so.1"] },
    customSqlite: null,
  },
  "darwin-arm64": {
    id: "darwin-arm64",
    os: "darwin",
    arch: "arm64",
    bunTarget: "bun-darwin-arm64",
    binary: "memsvc-darwin-arm64",
    sqliteVec: { package: "sqlite-vec-darwin-arm64", file: "vec0.dylib" },
    // The binding names @rpath/libonnxruntime.1.dylib with rpath @loader_path: the two must sit side by side.
    onnxruntime: { dir: `${ORT}/darwin/arm64`, binding: BINDING, libraries: ["libonnxruntime.1.dylib"] },
    customSqlite: { zigTarget: "aarch64-macos", file: "libsqlite3.dylib" },
  },
  "darwin-x64": {
    id: "darwin-x64",
    os: "darwin",
    arch: "x64",
    bunTarget: "bun-darwin-x64",
    binary: "memsvc-darwin-x64",
    sqliteVec: { package: "sqlite-vec-darwin-x64", file: "vec0.dylib" },
    onnxruntime: null,
    customSqlite: { zigTarget: "x86_64-macos", file: "libsqlite3.dylib" },
  },
  "windows-x64": {
    id: "windows-x64",
    os: "win32",
    arch: "x64",
    bunTarget: "bun-windows-x64",
    binary: "memsvc-windows-x64.exe",
    sqliteVec: { package: "sqlite-vec-windows-x64", file: "vec0.dll" },
    // DirectML.dll and friends are only for the DirectML provider, which memsvc does not use.
    onnxruntime: { dir: `${ORT}/win32/x64`, binding: BINDING, libraries: ["onnxruntime.dll"] },
    customSqlite: null,
  },
};

/** What a compiled binary carries: /$bunfs paths of one PLATFORMS row's files. */
export interface EmbeddedNatives {
  platform: PlatformId;
  sqliteVec: string;
  sqlite: string | null;
  onnxruntime: { binding: string; libraries: string[] } | null;
}

/** Where `bun build.ts --sqlite` leaves the darwin SQLite for source checkouts. */
export const SOURCE_SQLITE_DIR = join(import.meta.dir, "..", "..", ".build-cache", "sqlite");

export function platformOf(os: string, arch: string): PlatformNatives | null {
  return Object.values(PLATFORMS).find((p) => p.os === os && p.arch === arch) ?? null;
}

/** The row for the machine this process runs on (a binary's own row, whatever it is run under). */
export function runningPlatform(): PlatformNatives {
  if (embeddedNatives) return PLATFORMS[embeddedNatives.platform];
  const row = platformOf(process.platform, process.arch);
  if (!row) throw new Error(`memsvc has no native libraries for ${process.platform}-${process.arch}; supported: ${Object.keys(PLATFORMS).join(", ")}`);
  return row;
}

/** Path of the sqlite-vec library to pass to Database#loadExtension. */
export function sqliteVecLibrary(): string {
  const row = runningPlatform();
  if (embeddedNatives) return materialize(embeddedNatives.sqliteVec, row.sqliteVec.file);
  const spec = `${row.sqliteVec.package}/${row.sqliteVec.file}`;
  try {
    return Bun.resolveSync(spec, import.meta.dir);
  } catch {
    throw new Error(
      `sqlite-vec's library for ${row.id} (${spec}) is not installed; run \`npm install\` on this machine (npm installs only the running platform's package)`,
    );
  }
}

let sqlitePrepared = false;

/**
 * Selects the extension-capable SQLite on macOS. Must run before the first
 * Database of the process opens (Bun fixes the library then); elsewhere Bun's
 * own SQLite loads extensions and this does nothing.
 */
export function prepareSqlite(): void {
  if (sqlitePrepared) return;
  sqlitePrepared = true;
  const row = runningPlatform();
  if (!row.customSqlite) return;
  const path = embeddedNatives?.sqlite
    ? materialize(embeddedNatives.sqlite, row.customSqlite.file)
    : (process.env.MEMSVC_SQLITE_LIB ?? join(SOURCE_SQLITE_DIR, row.id, row.customSqlite.file));
  if (!existsSync(path)) {
    throw new Error(
      `macOS's own SQLite cannot load sqlite-vec and ${path} does not exist: run \`bun build.ts --sqlite\` once (or set MEMSVC_SQLITE_LIB to a SQLite library built with extension loading)`,
    );
  }
  Database.setCustomSQLite(path);
}

/** Held for the life of the process: closing a library would unmap code the binding still calls. */
const loadedLibraries: unknown[] = [];

/**
 * Loads onnxruntime-node's binding inside a compiled binary (build.ts points
 * onnxruntime-node's own require here). The binding and its shared library
 * are written side by side into the cache folder, because the binding finds
 * the library next to itself ($ORIGIN on Linux, @loader_path on macOS, the
 * DLL's folder on Windows) and native loaders cannot read /$bunfs. The
 * libraries are also loaded first, so a loader that ignores the binding's
 * folder still finds them already in the process.
 */
export function loadOnnxRuntimeBinding(): unknown {
  const row = runningPlatform();
  const ort = embeddedNatives?.onnxruntime;
  if (!ort || !row.onnxruntime) throw new Error(`this memsvc binary (${row.id}) carries no onnxruntime: onnxruntime-node ships no build for it`);
  row.onnxruntime.libraries.forEach((name, i) => {
    const path = materialize(ort.libraries[i]!, name);
    loadedLibraries.push(dlopen(path, { OrtGetApiBase: { args: [], returns: "ptr" } }));
  });
  return require(materialize(ort.binding, row.onnxruntime.binding));
}
