import { FTS_OPERATORS, hugeString, INVALID_UTF8, jsonWithBytes, MALFORMED_JSON, NASTY_STRINGS, NOT_BOOLEANS, NOT_STRINGS, TRAVERSAL, type Rng } from "./fuzz";

/**
 * The fuzz cases of every REST endpoint, built from a seeded generator.
 * `reject`: the request is wrong and must be refused with a 4xx (and change
 * nothing); `any`: odd but possibly valid, it must merely not fail (no 5xx).
 */
export interface FuzzCase {
  endpoint: string;
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  expect: "reject" | "any";
}

const JSON_CT = { "content-type": "application/json" };

const PROTO_KEYS = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

interface BodyEndpoint {
  name: string;
  method: string;
  path: string;
  /** A valid body: each case changes one field of it. */
  valid: (r: Rng) => Record<string, unknown>;
  strings: string[];
  /** String fields where any string is refused (ids, enumerations, dates). */
  strictStrings?: string[];
  booleans?: string[];
  required: string[];
  /** Fields that are accepted and ignored whatever their type. */
  ignored?: string[];
}

export function bodyEndpoints(memoryId: () => string): BodyEndpoint[] {
  return [
    {
      name: "POST /ingest",
      method: "POST",
      path: "/ingest",
      valid: (r) => ({ content: `Fuzz memory ${r.int(0, 1e9)} about harbour cranes and tide tables.`, project: "fuzz" }),
      strings: ["content", "source_agent", "project", "memory_type", "privacy", "source_session", "session_date"],
      strictStrings: ["memory_type", "privacy", "session_date"],
      required: ["content"],
    },
    {
      name: "POST /distill",
      method: "POST",
      path: "/distill",
      valid: (r) => ({
        text: `We decided to pin the harbour crane firmware to v${r.int(1, 99)} after the tide-table outage.`,
        session_id: `fuzz-${r.int(0, 1e9)}`,
      }),
      strings: ["text", "session_id", "segment_id", "session_date", "source_agent", "source_agent_id", "source_domain", "project"],
      strictStrings: ["session_date"],
      required: ["text"],
      ignored: ["privacy"],
    },
    {
      name: "POST /recall-index",
      method: "POST",
      path: "/recall-index",
      valid: (r) => ({ session_id: `fuzz-recall-${r.int(0, 1e9)}`, prompt: "How do we configure the harbour crane firmware and tide tables?" }),
      strings: ["session_id", "prompt", "project"],
      booleans: ["reset"],
      required: ["session_id"],
      ignored: ["privacy"],
    },
    {
      name: "PATCH /memory",
      method: "PATCH",
      path: "/memory",
      valid: () => ({ id: memoryId(), project: "fuzz" }),
      strings: ["id", "content", "project", "memory_type"],
      strictStrings: ["id", "memory_type"],
      required: ["id"],
    },
  ];
}

const reqOf = (
  e: { name: string; method: string; path: string },
  label: string,
  body: string | Uint8Array<ArrayBuffer>,
  expect: FuzzCase["expect"],
  headers: Record<string, string> = JSON_CT,
): FuzzCase => ({
  endpoint: e.name,
  label,
  method: e.method,
  path: e.path,
  headers,
  body,
  expect,
});

/** Malformed bodies, wrong content types, non-object JSON: the same for every endpoint with a body. */
export function envelopeCases(e: { name: string; method: string; path: string }, valid: Record<string, unknown>): FuzzCase[] {
  const out: FuzzCase[] = [];
  for (const m of MALFORMED_JSON) out.push(reqOf(e, `malformed ${JSON.stringify(m.slice(0, 20))}`, m, "reject"));
  for (const v of [[], [valid], 1, "str", null, true]) out.push(reqOf(e, `non-object ${JSON.stringify(v).slice(0, 30)}`, JSON.stringify(v), "reject"));
  out.push(reqOf(e, "empty body", "", "reject"));
  const json = JSON.stringify(valid);
  for (const ct of ["text/plain", "application/x-www-form-urlencoded", "application/xml", "application/octet-stream", "multipart/form-data; boundary=x"]) {
    out.push(reqOf(e, `content-type ${ct} (JSON inside)`, json, "reject", { "content-type": ct }));
  }
  out.push(reqOf(e, "no content-type", new TextEncoder().encode(json), "reject", {}));
  const form = Object.entries(valid)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === "string" ? v : JSON.stringify(v))}`)
    .join("&");
  out.push(reqOf(e, "form-encoded fields", form, "reject", { "content-type": "application/x-www-form-urlencoded" }));
  for (const bytes of INVALID_UTF8)
    out.push(
      reqOf(e, `invalid UTF-8 outside strings ${bytes}`, new Uint8Array([...new TextEncoder().encode(json.slice(0, -1)), 0x2c, ...bytes, 0x7d]), "reject"),
    );
  return out;
}

/** One field at a time: wrong types, missing, huge, invalid UTF-8, hostile strings; plus extra fields. */
export function fieldCases(e: BodyEndpoint, r: Rng): FuzzCase[] {
  const out: FuzzCase[] = [];
  const base = () => e.valid(r);
  const set = (field: string, value: unknown) => JSON.stringify({ ...base(), [field]: value });
  for (const f of e.strings) {
    const ignored = e.ignored?.includes(f) ?? false;
    for (const v of r.some(NOT_STRINGS, 6)) out.push(reqOf(e, `${f} = ${JSON.stringify(v)}`, set(f, v), ignored ? "any" : "reject"));
    out.push(reqOf(e, `${f} huge`, set(f, hugeString(r, 1, 5)), f === "prompt" ? "any" : "reject"));
    for (const bytes of r.some(INVALID_UTF8, 3)) out.push(reqOf(e, `${f} invalid UTF-8 ${bytes}`, jsonWithBytes(base(), f, bytes), "reject"));
    // Object.prototype's member names, for every seed: a lookup table must not find them (regression: memory_type "__proto__" was a 500).
    for (const v of PROTO_KEYS) out.push(reqOf(e, `${f} = ${JSON.stringify(v)}`, set(f, v), e.strictStrings?.includes(f) ? "reject" : "any"));
    // A blank optional string counts as absent.
    for (const v of r.some(NASTY_STRINGS, 8))
      out.push(reqOf(e, `${f} = ${JSON.stringify(v.slice(0, 30))}`, set(f, v), e.strictStrings?.includes(f) && v.trim() !== "" ? "reject" : "any"));
  }
  for (const f of e.booleans ?? []) for (const v of NOT_BOOLEANS) out.push(reqOf(e, `${f} = ${JSON.stringify(v)}`, set(f, v), "reject"));
  for (const f of e.ignored ?? [])
    for (const v of r.some([...NOT_STRINGS, ...NASTY_STRINGS], 4)) out.push(reqOf(e, `ignored ${f} = ${JSON.stringify(v).slice(0, 30)}`, set(f, v), "any"));
  for (const f of e.required) {
    const b = base();
    delete b[f];
    out.push(reqOf(e, `missing ${f}`, JSON.stringify(b), "reject"));
    out.push(reqOf(e, `${f} = ""`, set(f, ""), "reject"));
    out.push(reqOf(e, `${f} = "   "`, set(f, "  \t\n "), "reject"));
  }
  out.push(
    reqOf(e, "extra fields", JSON.stringify({ ...base(), extra: 1, __proto__: { polluted: true }, constructor: { prototype: { polluted: true } } }), "any"),
  );
  out.push(reqOf(e, "only unknown fields", JSON.stringify({ unknown: "x", other: [1, 2] }), "reject"));
  return out;
}

/** /distill messages and PUT /identity sections: structured fields. */
export function structuredCases(r: Rng): FuzzCase[] {
  const distill = { name: "POST /distill", method: "POST", path: "/distill" };
  const out: FuzzCase[] = [];
  const badMessages: unknown[] = [
    "text",
    1,
    {},
    [1],
    ["x"],
    [null],
    [{}],
    [{ role: "user" }],
    [{ content: "x" }],
    [{ role: 1, content: "x" }],
    [{ role: "user", content: 5 }],
    [{ role: "user", content: ["x"] }],
    [[{ role: "user", content: "x" }]],
    [{ role: "user", content: "" }],
  ];
  for (const m of badMessages) out.push(reqOf(distill, `messages = ${JSON.stringify(m)}`, JSON.stringify({ messages: m }), "reject"));
  out.push(reqOf(distill, "neither text nor messages", JSON.stringify({ session_id: "fuzz-none" }), "reject"));
  out.push(reqOf(distill, "segment_id without session_id", JSON.stringify({ text: "We chose the blue crane.", segment_id: "1" }), "reject"));
  out.push(reqOf(distill, "text huge (5 MB)", JSON.stringify({ text: hugeString(r, 5, 5) }), "reject"));

  for (const path of ["/identity", "/context"]) {
    const e = { name: `PUT ${path}`, method: "PUT", path };
    const put = (sections: unknown, label: string, query = "", expect: FuzzCase["expect"] = "reject") =>
      out.push({ ...reqOf(e, label, JSON.stringify({ sections }), expect), path: path + query });
    for (const v of [null, "soul", 1, [], [["soul", "x"]], true]) put(v, `sections = ${JSON.stringify(v)}`);
    const badNames = [
      ...TRAVERSAL,
      "",
      "Soul",
      "SOUL",
      "with space",
      "-lead",
      "_lead",
      "x".repeat(65),
      "memory",
      "naïve",
      "a/b",
      "a\\b",
      "a.md",
      "\u0000",
      "a\u0000b",
    ];
    for (const name of badNames) put({ [name]: "body" }, `section name ${JSON.stringify(name.slice(0, 30))}`);
    put({ fine: "ok", "../escape": "x" }, "one bad name among good ones (nothing written)");
    for (const v of r.some(NOT_STRINGS, 6)) put({ fuzzsec: v }, `section body ${JSON.stringify(v)}`);
    put({ fuzzsec: hugeString(r, 1, 2) }, "section body huge");
    out.push({
      ...reqOf(e, "section body invalid UTF-8", "", "reject"),
      body: new Uint8Array([...new TextEncoder().encode('{"sections":{"fuzzsec":"a'), 0xff, 0xfe, ...new TextEncoder().encode('"}}')]),
      path,
    });
    out.push({ ...reqOf(e, "unknown top-level field", JSON.stringify({ sections: { fuzzsec: "x" }, agent: "bob" }), "reject"), path });
    for (const a of [...TRAVERSAL.slice(0, 10), "Bob", "x".repeat(65), ""])
      put({ fuzzsec: "x" }, `agent ${JSON.stringify(a.slice(0, 20))}`, `?agent=${encodeURIComponent(a)}`);
    for (const v of r.some(NASTY_STRINGS, 6)) put({ fuzzsec: v }, `section body ${JSON.stringify(v.slice(0, 20))}`, "", "any");
  }

  const del = { name: "DELETE /memory", method: "DELETE", path: "/memory" };
  for (const v of [...NOT_STRINGS.slice(0, 5), ...TRAVERSAL.slice(0, 8), "", "zzzzzzzz", "0000000"])
    out.push(reqOf(del, `body id ${JSON.stringify(v).slice(0, 30)}`, JSON.stringify({ id: v }), "reject"));
  return out;
}

interface QueryEndpoint {
  name: string;
  path: string;
  method?: string;
  params: Record<string, "int" | "text" | "id" | "name" | "number">;
  /** Parameters a valid request carries (the fuzzed one replaces its own). */
  base?: Record<string, string>;
  /** Endpoints that refuse unknown parameters. */
  strictParams?: boolean;
}

/** `memoryId` gives an existing id, so the other parameters of an operation are reached. */
export const queryEndpoints = (memoryId: () => string): QueryEndpoint[] => [
  { name: "GET /search", path: "/search", params: { query: "text", limit: "int", project: "text" }, base: { query: "harbour crane" } },
  { name: "GET /recent", path: "/recent", params: { project: "text", limit: "int" } },
  { name: "GET /memory", path: "/memory", params: { id: "id" } },
  { name: "DELETE /memory", path: "/memory", method: "DELETE", params: { id: "id" } },
  { name: "GET /memory/history", path: "/memory/history", params: { id: "id" } },
  { name: "GET /learnings", path: "/learnings", params: { days: "int", project: "text" } },
  { name: "GET /lessons", path: "/lessons", params: { days: "int", project: "text" } },
  { name: "GET /index", path: "/index", params: {} },
  {
    name: "GET /graph neighbors",
    path: "/graph",
    params: { id: "id", limit: "int", relationship: "text" },
    base: { op: "neighbors", id: memoryId() },
    strictParams: true,
  },
  { name: "GET /graph hubs", path: "/graph", params: { limit: "int", domain: "text" }, base: { op: "hubs" }, strictParams: true },
  {
    name: "GET /graph path",
    path: "/graph",
    params: { id: "id", target_id: "id" },
    base: { op: "path", id: memoryId(), target_id: memoryId() },
    strictParams: true,
  },
  {
    name: "GET /graph export",
    path: "/graph",
    params: { domain: "text", type: "text", tag: "text", minStrength: "number", limit: "int" },
    base: { op: "export" },
    strictParams: true,
  },
  { name: "GET /graph op", path: "/graph", params: { op: "name" }, strictParams: true },
  { name: "GET /identity", path: "/identity", params: { agent: "name" } },
  { name: "GET /context", path: "/context", params: { agent: "name" } },
  { name: "GET /dashboard/data", path: "/dashboard/data", params: { days: "int" } },
  { name: "GET /account", path: "/account", params: {} },
  { name: "GET /health", path: "/health", params: {} },
];

const LOOKS_VALID: Record<QueryEndpoint["params"][string], RegExp> = {
  int: /^\d+$/,
  number: /^\d+(\.\d+)?$/,
  id: /^[0-9a-f-]{8,36}$/i,
  name: /^[a-z0-9][a-z0-9_-]{0,63}$/,
  text: /.*/,
};
const BAD_INTS = ["99999999999999999999", "abc", "-1", "0", "3.5", "1e9", "NaN", "Infinity", "-Infinity", "0x10", "1 OR 1", "", " ", "1;DROP"];
const BAD_NUMBERS = ["abc", "-1", "NaN", "Infinity", "1e999", "-0.5", "0x", ""];
const ENCODED_BYTES = ["%ff", "%fe%ff", "%c0%af", "%ed%a0%80", "%00", "a%00b", "%0d%0aSet-Cookie:%20x=1", "%", "%%", "%zz", "%e2%82"];

export function queryCases(e: QueryEndpoint, r: Rng): FuzzCase[] {
  const out: FuzzCase[] = [];
  const method = e.method ?? "GET";
  const url = (params: Record<string, string>, rawTail = "") => {
    const q = new URLSearchParams({ ...e.base, ...params }).toString();
    return `${e.path}?${q}${rawTail}`;
  };
  const add = (label: string, path: string, expect: FuzzCase["expect"]) => out.push({ endpoint: e.name, label, method, path, expect });
  for (const [p, kind] of Object.entries(e.params)) {
    const strict = kind !== "text";
    // A strict parameter must refuse whatever does not look like its kind.
    const verdict = (v: string): FuzzCase["expect"] => (!strict || v.trim() === "" || LOOKS_VALID[kind].test(v.trim()) ? "any" : "reject");
    // Blank is "use the default"; a huge integer is clamped to the maximum.
    for (const v of kind === "int" ? BAD_INTS : kind === "number" ? BAD_NUMBERS : [])
      add(`${p}=${v}`, url({ [p]: v }), v.trim() === "" || /^\d+$/.test(v) ? "any" : "reject");
    for (const v of r.some([...NASTY_STRINGS.filter((s) => s.length < 5000), ...FTS_OPERATORS, ...TRAVERSAL], 12))
      add(`${p}=${JSON.stringify(v.slice(0, 20))}`, url({ [p]: v }), verdict(v));
    for (const b of ENCODED_BYTES) add(`${p} raw-encoded ${b}`, `${url({})}&${p}=${b}`, strict ? "reject" : "any");
    add(`${p} 12 KB`, url({ [p]: "q".repeat(12 * 1024) }), strict ? "reject" : "any");
    add(`${p} repeated`, `${url({ [p]: "1" })}&${p}=2&${p}=zz`, "any");
    add(`${p}[] array syntax`, `${url({})}&${p}[]=1&${p}[]=2`, e.strictParams ? "reject" : "any");
  }
  add("unknown parameter", url({ frobnicate: "1" }), e.strictParams ? "reject" : "any");
  add("__proto__ parameter", `${url({})}&__proto__[x]=1&constructor[prototype][y]=2`, e.strictParams ? "reject" : "any");
  return out;
}
