import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveNatives, type ResolvedNatives } from "../../build";
import { sha256File } from "../../sha256sums";
import { PLATFORMS, type PlatformId } from "../../src/platform/natives";
import { allPlatformBinaries, DIST_TIMEOUT_MS, type Dist } from "../helpers/dist";
import { onPostgres } from "../helpers/engine";
import { exeFormat } from "../helpers/exe-format";

// What can be checked here without the platform: every binary's own header,
// and that it carries its platform's native files (found byte for byte, with
// the right header where they start) and no other platform's. Running them is
// binary.test.ts (this machine's) and qemu-arm64.test.ts (linux-arm64).

const EXPECTED: Record<PlatformId, { format: "elf" | "macho" | "pe"; arch: "x64" | "arm64" }> = {
  "linux-x64": { format: "elf", arch: "x64" },
  "linux-arm64": { format: "elf", arch: "arm64" },
  "darwin-arm64": { format: "macho", arch: "arm64" },
  "darwin-x64": { format: "macho", arch: "x64" },
  "windows-x64": { format: "pe", arch: "x64" },
};
const IDS = Object.keys(PLATFORMS) as PlatformId[];

/** The header an embedded native library of `id` must have. Apple silicon loads only signed code (ad hoc is enough); Intel Macs do not ask. */
function library(id: PlatformId) {
  return { ...EXPECTED[id], kind: "library", ...(id === "darwin-arm64" ? { signed: true } : {}) };
}

let dist: Dist;
const natives = {} as Record<PlatformId, ResolvedNatives>;
const binaries = new Map<PlatformId, Buffer>();
// PostgreSQL run: engine-independent (the binaries' structure and install.sh touch no store): covered by the SQLite run.
const engineIndependent = onPostgres;
beforeAll(async () => {
  if (engineIndependent) return;
  dist = await allPlatformBinaries();
  for (const id of IDS) natives[id] = await resolveNatives(PLATFORMS[id]);
}, DIST_TIMEOUT_MS);

function binary(id: PlatformId): Buffer {
  let buf = binaries.get(id);
  if (!buf) {
    // One binary in memory at a time: five would be 800 MB.
    binaries.clear();
    buf = readFileSync(join(dist.dir, PLATFORMS[id].binary));
    binaries.set(id, buf);
  }
  return buf;
}

/** Where `file` starts inside `bin`, or -1: its head must be there, and the rest of it must follow in place. */
function embeddedAt(bin: Buffer, file: string): number {
  const bytes = readFileSync(file);
  const at = bin.indexOf(bytes.subarray(0, 4096));
  if (at < 0) return -1;
  for (const fraction of [0.25, 0.5, 0.75, 1]) {
    const end = Math.floor(bytes.length * fraction);
    const start = Math.max(0, end - 4096);
    if (!bin.subarray(at + start, at + end).equals(bytes.subarray(start, end))) return -1;
  }
  return at;
}

/** True when a distinctive stretch from the middle of `file` occurs anywhere in `bin`. */
function contains(bin: Buffer, file: string): boolean {
  const bytes = readFileSync(file);
  const mid = Math.floor(bytes.length / 2);
  return bin.indexOf(bytes.subarray(mid, mid + 1024)) >= 0;
}

test.skipIf(engineIndependent)("SHA256SUMS lists each of the five binaries with its hash", async () => {
  const lines = readFileSync(join(dist.dir, "SHA256SUMS"), "utf8").trim().split("\n");
  expect(lines.map((l) => l.split("  ")[1]).sort()).toEqual(IDS.map((id) => PLATFORMS[id].binary).sort());
  for (const line of lines) {
    const [hash, name] = line.split("  ");
    expect(hash).toBe(await sha256File(join(dist.dir, name!)));
  }
});

describe.each(IDS)("%s binary", (id) => {
  const row = PLATFORMS[id];

  test.skipIf(engineIndependent)("is an executable of its platform's format and CPU", () => {
    const format = exeFormat(binary(id));
    expect(format).toMatchObject({ ...EXPECTED[id], kind: "executable" });
    // Apple silicon kills unsigned code: the binary must carry at least an ad-hoc signature.
    if (id === "darwin-arm64") expect(format?.signed).toBe(true);
  });

  test.skipIf(engineIndependent)("embeds its platform's sqlite-vec library, and no other platform's", () => {
    const bin = binary(id);
    const at = embeddedAt(bin, natives[id].sqliteVec);
    expect(at).toBeGreaterThan(0);
    expect(exeFormat(bin, at)).toMatchObject(library(id));
    for (const other of IDS.filter((o) => o !== id)) expect(contains(bin, natives[other].sqliteVec)).toBe(false);
  });

  test.skipIf(engineIndependent)("embeds its platform's onnxruntime binding and library (none for darwin-x64), and no other platform's", () => {
    const bin = binary(id);
    const own = natives[id].onnxruntime;
    if (row.onnxruntime) {
      expect(own).not.toBeNull();
      for (const file of [own!.binding, ...own!.libraries]) {
        const at = embeddedAt(bin, file);
        expect(at).toBeGreaterThan(0);
        expect(exeFormat(bin, at)).toMatchObject(library(id));
      }
    } else {
      expect(own).toBeNull();
    }
    for (const other of IDS.filter((o) => o !== id)) {
      const theirs = natives[other].onnxruntime;
      if (theirs) expect(contains(bin, theirs.binding)).toBe(false);
    }
  });

  test.skipIf(engineIndependent)(
    row.customSqlite ? "embeds an extension-capable SQLite with FTS5 for its CPU" : "uses Bun's own SQLite (none embedded)",
    () => {
      const bin = binary(id);
      const sqlite = natives[id].sqlite;
      if (!row.customSqlite) {
        expect(sqlite).toBeNull();
        return;
      }
      const at = embeddedAt(bin, sqlite!);
      expect(at).toBeGreaterThan(0);
      // Zig's linker signs arm64 output ad hoc.
      expect(exeFormat(bin, at)).toMatchObject(library(id));
      const text = readFileSync(sqlite!).toString("latin1");
      // sqlite3_compileoption_get's table is stored as plain strings.
      expect(text).toContain("ENABLE_FTS5");
      expect(text).toContain("THREADSAFE=1");
      expect(text).not.toContain("OMIT_LOAD_EXTENSION");
      expect(text).toContain("sqlite3_load_extension");
      expect(text).toContain("sqlite3_enable_load_extension");

      // bun:sqlite on macOS finds SQLite's functions by name (dlsym) in whatever library it is given;
      // each name its runtime asks for must be exported by ours. The library's own bytes are blanked
      // first, so the names come from the rest of the binary (Bun itself).
      const exported = new Set([...text.matchAll(/(?<=[^\x20-\x7e]_)(sqlite3_[a-z0-9_]+)(?=\0)/g)].map((m) => m[1]));
      const rest = Buffer.concat([bin.subarray(0, at), bin.subarray(at + readFileSync(sqlite!).length)]).toString("latin1");
      const wanted = new Set([...rest.matchAll(/(?<=[^\x20-\x7e])(sqlite3_[a-z0-9_]+)(?=\0)/g)].map((m) => m[1]!));
      // sqlite-vec's entry point and SQLite's default entry-point name are not functions bun:sqlite looks up.
      for (const name of ["sqlite3_vec_init", "sqlite3_extension_init"]) wanted.delete(name);
      expect(wanted.size).toBeGreaterThan(80);
      expect([...wanted].filter((name) => !exported.has(name))).toEqual([]);
    },
  );
});
