import { dbRows, sqliteStoreOf } from "./engine";
import { readdirSync, readFileSync, statSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import type { Services } from "../../src/core/services";

/**
 * Generators for the fuzz suite. Everything is derived from a seeded PRNG, so
 * a failing case is reproduced by rerunning with the same seed (FUZZ_SEED).
 */

/** mulberry32: small, fast, good enough to pick cases deterministically. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    /** Up to n distinct elements, in random order. */
    some: <T>(xs: readonly T[], n: number): T[] => [...xs].sort(() => next() - 0.5).slice(0, n),
  };
}
export type Rng = ReturnType<typeof rng>;

/** A string of 1-5 MB (random words, so it is not one repeated character). */
export function hugeString(r: Rng, minMb = 1, maxMb = 5): string {
  const target = r.int(minMb * 1024 * 1024, maxMb * 1024 * 1024);
  const words = Array.from({ length: 64 }, (_, i) => `w${i.toString(36)}${"abcdefghij".slice(0, r.int(1, 10))}`);
  const unit = `${Array.from({ length: 256 }, () => r.pick(words)).join(" ")}\n`;
  return unit.repeat(Math.ceil(target / unit.length)).slice(0, target);
}

/** JSON values of every kind but string: what a string field must refuse. */
export const NOT_STRINGS: readonly unknown[] = [0, -1, 3.5, 1e308, true, false, [], ["a"], {}, { a: 1 }, [[[[]]]]];
/** What a boolean field must refuse. */
export const NOT_BOOLEANS: readonly unknown[] = ["true", "yes", 1, 0, [], {}, [true]];

/** FTS5 query syntax that breaks MATCH when passed through raw. */
export const FTS_OPERATORS: readonly string[] = [
  '"',
  '"unbalanced',
  "AND",
  "OR NOT",
  "a AND OR b",
  "NEAR(a b, 2)",
  "*",
  "prefix*",
  "-excluded",
  "^start",
  "col:value",
  "{content source_agent}: x",
  "(a OR b",
  "a)",
  "a + b",
  "don't",
  "''",
  "\\",
  "%",
  "_",
];

/** Path traversal in names, ids and file names, plain and encoded. */
export const TRAVERSAL: readonly string[] = [
  "../",
  "../../etc/passwd",
  "..%2f..%2fetc%2fpasswd",
  "%2e%2e%2f%2e%2e%2fpackage.json",
  "%2e%2e/%2e%2e/package.json",
  "..%252f..%252fpackage.json",
  "..\\..\\config.json",
  "..%5c..%5cconfig.json",
  "....//....//package.json",
  "..;/package.json",
  "%c0%ae%c0%ae%c0%afpackage.json",
  "app.js%00.png",
  "app.js\u0000",
  "/etc/passwd",
  "C:\\Windows\\win.ini",
  "\\\\server\\share",
  "file:///etc/passwd",
  ".",
  "..",
  ".git/config",
  "agents/../../x",
];

/** Strings that are legal JSON but hostile: control characters, NUL, odd Unicode, injections. */
export const NASTY_STRINGS: readonly string[] = [
  "\u0000",
  "a\u0000b",
  "\u0001\u0002\u0003\u0007\b\f\u000b\u001b[31mred\u001b[0m",
  "\r\n\r\nHTTP/1.1 200 OK\r\n",
  "\t \n \r",
  "\ud800",
  "\udfff\ud800",
  "\u202eevil\u202c",
  "\u200b\u200c\u200d\ufeff",
  "😀🧠🔥".repeat(50),
  "ｆｕｌｌｗｉｄｔｈ",
  "'; DROP TABLE memories; --",
  '" OR 1=1 --',
  "<script>alert(1)</script>",
  "${process.env.HOME}",
  "{{7*7}}",
  "%00%ff%fe",
  "__proto__",
  "constructor",
  "a".repeat(70_000),
  ...FTS_OPERATORS.slice(0, 8),
  ...TRAVERSAL.slice(0, 6),
];

/** Bodies that are not JSON at all, or not quite. */
export const MALFORMED_JSON: readonly string[] = [
  "{",
  "}",
  '{"content":',
  '{"content": "x",}',
  "{'content': 'x'}",
  '{content: "x"}',
  '{"content": "x"} trailing',
  '{"content": "unterminated}',
  '{"content": "bad escape \\q"}',
  '{"content": "\\ud800\\u"}',
  "[1, 2",
  "nul",
  "NaN",
  '{"a": 01}',
  '{"a": .5}',
  '{"a": Infinity}',
  "\u0000",
  '\ufeff{"content":"bom"}garbage',
  '{"content": "x"}{"content": "y"}',
  "[".repeat(100_000),
  '{"a":'.repeat(50_000),
];

/** Byte sequences that are not UTF-8: lone/overlong/surrogate/out-of-range/truncated. */
export const INVALID_UTF8: readonly number[][] = [
  [0xff],
  [0xfe, 0xff],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0x80],
  [0xe2, 0x82],
  [0xf4, 0x90, 0x80, 0x80],
];

/** A JSON object body whose string `field` holds raw (non-UTF-8) bytes. */
export function jsonWithBytes(base: Record<string, unknown>, field: string, bytes: number[]): Uint8Array<ArrayBuffer> {
  const marker = "@@BYTES@@";
  const text = JSON.stringify({ ...base, [field]: `x${marker}y` });
  const [head, tail] = text.split(marker);
  const enc = new TextEncoder();
  return new Uint8Array([...enc.encode(head), ...bytes, ...enc.encode(tail)]);
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request written byte for byte on a fresh socket: fetch would normalize
 * `..` segments and refuse invalid bytes before they ever reach the server.
 */
export function rawHttp(port: number, request: string | Uint8Array, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error("raw request timed out"));
    }, timeoutMs);
    sock.on("data", (d) => chunks.push(d as Buffer));
    sock.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n([\s\S]*)$/.exec(text);
      if (!m) return reject(new Error(`no HTTP response (connection closed after ${text.length} bytes)`));
      const headers: Record<string, string> = {};
      for (const line of m[2].split("\r\n").filter(Boolean)) {
        const i = line.indexOf(":");
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(m[1]), headers, body: m[3] });
    });
    sock.write(request);
  });
}

/** A GET written raw: the path goes out exactly as given. */
export function rawGet(port: number, path: string | Uint8Array, headers: Record<string, string> = {}): Promise<RawResponse> {
  const head = Object.entries({ host: "127.0.0.1", connection: "close", ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  const enc = new TextEncoder();
  const p = typeof path === "string" ? enc.encode(path) : path;
  return rawHttp(port, new Uint8Array([...enc.encode("GET "), ...p, ...enc.encode(` HTTP/1.1\r\n${head}\r\n`)]));
}

const TABLES = [
  "memories",
  "links",
  "memory_tags",
  "segments",
  "memory_events",
  "recall_sessions",
  "recall_shown",
  "meta",
  "nightly_runs",
  "memory_primary_domain",
];

/**
 * Everything a request could change: row counts (vectors and FTS rows
 * included), a hash of every row of the ordinary tables and of the vectors,
 * and a hash of every file in the home except the database itself.
 * On PostgreSQL one query counts and hashes every table (identity sections
 * included: they live there instead of in files), in text form.
 */
export async function snapshot(s: Services): Promise<{ counts: Record<string, number>; hash: string }> {
  const counts: Record<string, number> = {};
  const h = new Bun.CryptoHasher("sha256");
  if (s.config.storage === "postgres") {
    const tables = [...TABLES, "memory_vec", "identity_sections", "memory_history", "memory_anchors"];
    const sql = tables
      .map((t) => `SELECT '${t}' AS t, count(*) AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM ${t} x`)
      .join(" UNION ALL ");
    for (const r of await dbRows<{ t: string; n: number; h: string }>(s, sql)) {
      counts[r.t] = r.n;
      h.update(`${r.t}:${r.h}`);
    }
  } else {
    const db = sqliteStoreOf(s).sqlite;
    for (const t of [...TABLES, "memory_vec", "memories_fts"]) counts[t] = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${t}`).get()!.n;
    for (const t of TABLES) {
      for (const row of db
        .query<Record<string, unknown>, []>(`SELECT * FROM ${t}`)
        .all()
        .map((r) => JSON.stringify(r))
        .sort())
        h.update(row);
    }
    for (const v of db.query<{ rowid: number; embedding: Uint8Array }, []>("SELECT rowid, embedding FROM memory_vec ORDER BY rowid").all()) {
      h.update(String(v.rowid));
      h.update(v.embedding);
    }
  }
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (dir === s.config.home && name.startsWith("memsvc.db")) continue;
      const st = statSync(path);
      h.update(path);
      if (st.isDirectory()) walk(path);
      else h.update(readFileSync(path));
    }
  };
  walk(s.config.home);
  return { counts, hash: h.digest("hex") };
}
