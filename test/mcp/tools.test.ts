import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addLink } from "../../src/core/graph";
import { putIdentity } from "../../src/core/identity";
import { ingestMemory } from "../../src/core/ingest";
import { dbRow, dbRows, onPostgres } from "../helpers/engine";
import { byLabel, drive, type DriverResult, type DriverStep } from "../helpers/mcp";
import { startServer, type TestServer } from "../helpers/server";

const TOOLS = [
  "memsvc_delete",
  "memsvc_feedback",
  "memsvc_get",
  "memsvc_graph",
  "memsvc_history",
  "memsvc_identity",
  "memsvc_index",
  "memsvc_ingest",
  "memsvc_learnings",
  "memsvc_lessons",
  "memsvc_recent",
  "memsvc_search",
  "memsvc_update",
];

let srv: TestServer;
const ids: Record<string, string> = {};

async function seed(key: string, content: string, extra: Record<string, unknown> = {}) {
  const r = await ingestMemory(srv.services, { content, project: "memsvc", source_agent: "seed-agent", ...extra });
  ids[key] = r.id!;
}

const short = (key: string) => ids[key].slice(0, 8);
const row = async (id: string) =>
  (await dbRow<{ content: string; source_agent: string; project: string | null; used_count: number; seq: number }>(
    srv.services,
    "SELECT * FROM memories WHERE id = ?",
    [id],
  )) ?? null;
/** The stored vector as text, to compare before and after. */
async function vector(seq: number): Promise<string> {
  if (onPostgres) return (await dbRow<{ e: string }>(srv.services, "SELECT embedding::text AS e FROM memory_vec WHERE seq = ?", [seq]))!.e;
  return Buffer.from((await dbRow<{ e: Uint8Array }>(srv.services, "SELECT embedding AS e FROM memory_vec WHERE rowid = ?", [seq]))!.e).toString("hex");
}

beforeAll(async () => {
  srv = await startServer();
  const s = srv.services;
  await seed("wal", "SQLite WAL mode lets concurrent readers proceed while one writer commits; memsvc enables it at open.", { memory_type: "knowledge" });
  await seed("idle", "Bun.serve closes connections idle for idleTimeout seconds, which ends SSE streams unless keepalive comments are sent.");
  await seed("deploy", "Deploying the staging cluster needs the VPN and a fresh kubeconfig from the ops vault.", { project: "ops" });
  await seed("lesson", "Send a keepalive comment on long-lived event streams: idle timeouts silently end sessions.", { memory_type: "learnings" });
  for (const t of ["sse", "http"]) {
    await seed(`upd-${t}`, `Port 8787 is the default of memsvc (${t} copy).`);
    await seed(`del-${t}`, `Temporary scratch memory about zebra crossings (${t}).`);
    await seed(`hist-${t}`, `The release branch is cut on Tuesdays (${t}).`);
  }
  await seed("twin1", "Twin memory one about lighthouses.");
  await seed("twin2", "Twin memory two about lighthouses.");
  await addLink(s, ids.wal, ids.idle, "supports", 0.9);
  await addLink(s, ids.idle, ids.deploy, "related", 0.6);
  for (const t of ["sse", "http"]) await addLink(s, ids[`del-${t}`], ids.wal, "related", 0.4);
  // Two memories sharing an 8-character prefix: rewrite one id.
  const twin = `${short("twin1")}-ffff-4fff-bfff-ffffffffffff`;
  if (onPostgres) {
    // One statement: PostgreSQL checks the foreign keys at its end, when every reference has moved.
    await dbRows(
      s,
      `WITH m AS (UPDATE memories SET id = ? WHERE id = ?), t AS (UPDATE memory_tags SET memory_id = ? WHERE memory_id = ?),
       f AS (UPDATE links SET from_id = ? WHERE from_id = ?), o AS (UPDATE links SET to_id = ? WHERE to_id = ?) SELECT 1 AS done`,
      [twin, ids.twin2, twin, ids.twin2, twin, ids.twin2, twin, ids.twin2],
    );
  } else {
    const h = s.store.sqlite;
    h.run("PRAGMA foreign_keys = OFF");
    h.run("UPDATE memories SET id = ? WHERE id = ?", [twin, ids.twin2]);
    h.run("UPDATE memory_tags SET memory_id = ? WHERE memory_id = ?", [twin, ids.twin2]);
    h.run("UPDATE links SET from_id = ? WHERE from_id = ?", [twin, ids.twin2]);
    h.run("UPDATE links SET to_id = ? WHERE to_id = ?", [twin, ids.twin2]);
    h.run("PRAGMA foreign_keys = ON");
  }
  ids.twin2 = twin;
  await putIdentity(s, { sections: { soul: "I am the test agent. I cite my sources.\n" } });
});

afterAll(() => srv.stop());

function plan(t: "sse" | "http"): DriverStep[] {
  return [
    { label: "list", list: true },
    { label: "search", call: "memsvc_search", args: { query: "SQLite WAL concurrent readers" } },
    { label: "search-limit", call: "memsvc_search", args: { query: "memsvc", limit: 1, project: "memsvc" } },
    { label: "get-prefix", call: "memsvc_get", args: { id: short("wal") } },
    { label: "get-full", call: "memsvc_get", args: { id: ids.idle } },
    { label: "recent", call: "memsvc_recent", args: {} },
    { label: "recent-ops", call: "memsvc_recent", args: { project: "ops", limit: 5 } },
    { label: "ingest", call: "memsvc_ingest", args: { content: `MCP over ${t}: tools answer through the same core functions as REST.`, project: "memsvc" } },
    {
      label: "ingest-typed",
      call: "memsvc_ingest",
      args: { content: `Decision (${t}): keep the legacy SSE transport next to /mcp.`, memory_type: "decision" },
    },
    { label: "ingest-secret", call: "memsvc_ingest", args: { content: `Sessions (${t}) live in redis://:Pw-${t}-9x@cache:6379/0 behind the proxy.` } },
    { label: "learnings", call: "memsvc_learnings", args: {} },
    { label: "lessons", call: "memsvc_lessons", args: { days: 30, project: "memsvc" } },
    { label: "identity", call: "memsvc_identity", args: {} },
    { label: "identity-soul", call: "memsvc_identity", args: { name: "soul" } },
    { label: "index", call: "memsvc_index", args: {} },
    { label: "neighbors", call: "memsvc_graph", args: { operation: "neighbors", id: short("wal") } },
    { label: "hubs", call: "memsvc_graph", args: { operation: "hubs", limit: 3 } },
    { label: "path", call: "memsvc_graph", args: { operation: "path", id: short("wal"), target_id: ids.deploy } },
    { label: "update", call: "memsvc_update", args: { id: short(`upd-${t}`), content: `Port 9999 is used in tests (${t} copy).`, project: "tests" } },
    { label: "delete", call: "memsvc_delete", args: { id: ids[`del-${t}`] } },
    { label: "hist-none", call: "memsvc_history", args: { id: short(`hist-${t}`) } },
    { label: "hist-update", call: "memsvc_update", args: { id: short(`hist-${t}`), content: `The release branch is cut on Thursdays (${t}).` } },
    { label: "hist", call: "memsvc_history", args: { id: short(`hist-${t}`) } },
    { label: "hist-restore", call: "memsvc_history", args: { id: short(`hist-${t}`), restore: 1 } },
    { label: "hist-after", call: "memsvc_history", args: { id: ids[`hist-${t}`] } },
    { label: "e-hist-version", call: "memsvc_history", args: { id: short(`hist-${t}`), restore: 99 } },
    { label: "e-hist-zero", call: "memsvc_history", args: { id: short(`hist-${t}`), restore: 0 } },
    // Errors: each an isError result, and the session keeps answering.
    { label: "e-missing", call: "memsvc_search", args: {} },
    { label: "e-type", call: "memsvc_search", args: { query: "x", limit: "many" } },
    { label: "e-extra", call: "memsvc_search", args: { query: "x", privacy: "WORK" } },
    { label: "e-range", call: "memsvc_learnings", args: { days: 0 } },
    { label: "e-minscore", call: "memsvc_search", args: { query: "x", min_score: 1.5 } },
    { label: "search-floor", call: "memsvc_search", args: { query: "what is the capital of France", min_score: 0.3 } },
    { label: "e-unknown", call: "memsvc_get", args: { id: "00000000" } },
    { label: "e-ambiguous", call: "memsvc_get", args: { id: short("twin1") } },
    { label: "e-badid", call: "memsvc_delete", args: { id: "nope" } },
    { label: "e-op", call: "memsvc_graph", args: { operation: "export" } },
    { label: "e-path", call: "memsvc_graph", args: { operation: "path", id: short("wal") } },
    { label: "e-neighbors", call: "memsvc_graph", args: { operation: "neighbors" } },
    { label: "e-misplaced", call: "memsvc_graph", args: { operation: "hubs", id: short("wal") } },
    { label: "e-nothing", call: "memsvc_update", args: { id: short("wal") } },
    { label: "e-memtype", call: "memsvc_ingest", args: { content: "x", memory_type: "poem" } },
    { label: "e-section", call: "memsvc_identity", args: { name: "nosuch" } },
    { label: "e-deleted", call: "memsvc_get", args: { id: ids[`del-${t}`] } },
    { label: "after", call: "memsvc_search", args: { query: "keepalive idle" } },
    { label: "feedback-outdated", call: "memsvc_feedback", args: { id: short("wal"), kind: "outdated", note: `WAL mode changed (${t})` } },
    { label: "e-feedback-kind", call: "memsvc_feedback", args: { id: short("wal"), kind: "meh" } },
    { label: "e-feedback-irrelevant", call: "memsvc_feedback", args: { id: short("idle"), kind: "irrelevant" } },
  ];
}

const ok = (r: DriverResult) => {
  expect(r.error).toBeUndefined();
  expect(r.isError).toBe(false);
  return r.text!;
};
const err = (r: DriverResult) => {
  expect(r.error).toBeUndefined();
  expect(r.isError).toBe(true);
  return r.text!;
};

describe.each(["sse", "http"] as const)("MCP tools over %s", (t) => {
  let r: Record<string, DriverResult>;
  let usedBefore: number;
  let vectorBefore: string;

  beforeAll(async () => {
    usedBefore = (await row(ids.wal))!.used_count;
    vectorBefore = await vector((await row(ids[`upd-${t}`]))!.seq);
    const [results] = await drive(srv.url, t, { steps: plan(t) });
    r = byLabel(results);
  });

  test("feedback: the agent reports a memory; an outdated one carries the note in search; bad kinds and a missing prompt are explained", async () => {
    expect(ok(r["feedback-outdated"])).toContain(`memory ${short("wal")} outdated`);
    expect(err(r["e-feedback-kind"])).toContain("kind must be one of wrong, outdated, useful or irrelevant");
    expect(err(r["e-feedback-irrelevant"])).toContain("give the prompt it is irrelevant to");
    const [receipt] = (await (await fetch(`${srv.url}/recall/receipts?kind=search&limit=50`)).json()).receipts.filter((x: { via: string }) => x.via === "mcp");
    expect(receipt).toMatchObject({ kind: "search", via: "mcp" });
  });

  test("a search's receipt names the MCP session it came in (GET /recall/receipts?session_id= finds it)", async () => {
    const session = r.search.session!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    const receipts = (await (await fetch(`${srv.url}/recall/receipts?kind=search&limit=50&session_id=${session}`)).json()).receipts;
    // This session's searches only (the other transport's session is another id), the first of them included.
    expect(receipts.length).toBeGreaterThanOrEqual(2);
    expect(receipts.every((x: { session_id: string; via: string }) => x.session_id === session && x.via === "mcp")).toBe(true);
    expect(receipts.map((x: { prompt: string }) => x.prompt)).toContain("SQLite WAL concurrent readers");
  });

  test("lists exactly the 13 tools (the spec's ten, the lessons alias, memsvc_history, memsvc_feedback), with the spec's parameters", () => {
    const tools = r.list.tools!;
    expect(tools.map((x) => x.name).sort()).toEqual(TOOLS);
    const schema = (name: string) => tools.find((x) => x.name === name)!.schema;
    expect(schema("memsvc_search").required).toEqual(["query"]);
    expect(schema("memsvc_search").properties.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 100 });
    expect(schema("memsvc_search").properties.min_score).toMatchObject({ type: "number", minimum: 0, maximum: 1 });
    expect(schema("memsvc_learnings").properties.days).toMatchObject({ type: "integer", maximum: 365 });
    expect(Object.keys(schema("memsvc_graph").properties).sort()).toEqual(["domain", "id", "limit", "operation", "target_id"]);
    expect(schema("memsvc_graph").properties.operation.enum).toEqual(["neighbors", "hubs", "path"]);
    expect(schema("memsvc_index").properties).toEqual({});
    expect(Object.keys(schema("memsvc_history").properties).sort()).toEqual(["id", "restore"]);
    expect(schema("memsvc_history").required).toEqual(["id"]);
    expect(schema("memsvc_feedback").required).toEqual(["id", "kind"]);
    expect(schema("memsvc_lessons")).toEqual(schema("memsvc_learnings"));
    for (const x of tools) expect(x.description.length).toBeGreaterThan(80);
    expect(tools.find((x) => x.name === "memsvc_get")!.description).toContain("(memory <short_id>, <date>, from <source_agent>)");
  });

  test("search: content, score, strength, type, project, connections, citation; limit and project", () => {
    const text = ok(r.search);
    expect(text).toContain(`[${short("wal")}] knowledge · project memsvc · score `);
    expect(text).toMatch(/strength [\d.]+ · \d+ connections? · \d{4}-\d\d-\d\d · from seed-agent/);
    expect(text).toContain("SQLite WAL mode lets concurrent readers");
    expect(text).toContain(`Cite: (memory ${short("wal")}, `);
    const one = ok(r["search-limit"]);
    expect(one).toStartWith('1 memory for "memsvc" in project memsvc');
    expect(one).not.toContain("project ops");
  });

  test("get: provenance header, full content, citation; marks the memory used", async () => {
    const text = ok(r["get-prefix"]);
    expect(text).toContain(`- id: ${ids.wal}`);
    expect(text).toContain("- type: knowledge");
    expect(text).toContain("- project: memsvc");
    expect(text).toContain("- origin agent: seed-agent");
    expect(text).toMatch(/- date: \d{4}-\d\d-\d\d/);
    expect(text).toContain("SQLite WAL mode lets concurrent readers proceed while one writer commits; memsvc enables it at open.");
    expect(text).toMatch(new RegExp(`Cite as: \\(memory ${short("wal")}, \\d{4}-\\d\\d-\\d\\d, from seed-agent\\)$`));
    expect((await row(ids.wal))!.used_count).toBeGreaterThan(usedBefore);
    expect(ok(r["get-full"])).toContain(`- id: ${ids.idle}`);
  });

  test("recent: scored, with connections; project filter and limit", () => {
    expect(ok(r.recent)).toMatch(/most important recent memories \(strength, connections and recency\)/);
    const ops = ok(r["recent-ops"]);
    expect(ops).toStartWith("1 most important recent memory in project ops");
    expect(ops).toContain(`[${short("deploy")}]`);
    expect(ops).toMatch(/score [\d.]+ · strength [\d.]+ · 1 connection ·/);
  });

  test("ingest: confirmation with the id; memory_type defaults to experience, legacy names map", async () => {
    const m = /^Stored memory ([0-9a-f]{8}) \(experience\)\.\nid: ([0-9a-f-]{36})$/.exec(ok(r.ingest));
    expect(m).not.toBeNull();
    const stored = (await row(m![2]))!;
    expect(stored.content).toBe(`MCP over ${t}: tools answer through the same core functions as REST.`);
    expect(stored.source_agent).toBe("driver-agent");
    expect(stored.project).toBe("memsvc");
    expect(ok(r["ingest-typed"])).toContain("(decisions)");
  });

  test("ingest redacts secrets before storing, as REST does (one core function)", async () => {
    const m = /id: ([0-9a-f-]{36})$/.exec(ok(r["ingest-secret"]));
    const stored = (await row(m![1]))!;
    expect(stored.content).toBe(`Sessions (${t}) live in redis://:[REDACTED:password]@cache:6379/0 behind the proxy.`);
  });

  test("learnings and the lessons alias list learnings-type memories", () => {
    for (const k of ["learnings", "lessons"]) {
      const text = ok(r[k]);
      expect(text).toContain(`[${short("lesson")}] learnings · project memsvc`);
      expect(text).toContain("Send a keepalive comment on long-lived event streams");
      expect(text).not.toContain(short("wal"));
    }
    expect(ok(r.learnings)).toContain("from the last 7 days");
    expect(ok(r.lessons)).toContain("from the last 30 days for project memsvc");
  });

  test("identity: ### sections, one by name", () => {
    const all = ok(r.identity);
    expect(all).toContain("### soul\n\nI am the test agent. I cite my sources.");
    expect(all).toContain("### memory");
    expect(ok(r["identity-soul"])).toBe("### soul\n\nI am the test agent. I cite my sources.");
  });

  test("index: domains with memory and learnings counts, projects", () => {
    const text = ok(r.index);
    expect(text).toMatch(/^\d+ memor(y|ies) \(\d+ learnings?\) in \d+ domains? and \d+ projects?\./);
    expect(text).toMatch(/- memsvc \(project\): \d+ memories, [1-9]\d* learnings?/);
    expect(text).toContain("Projects:\n");
    expect(text).toMatch(/- ops: 1 memory, 0 learnings/);
  });

  test("graph: neighbors, hubs, path", () => {
    const n = ok(r.neighbors);
    expect(n).toContain(`Memory ${short("wal")} (knowledge`);
    expect(n).toContain(`- ${short("idle")} [supports → 0.9]`);
    expect(ok(r.hubs)).toStartWith("Hub memories, most links first:\n1. ");
    expect(
      ok(r.hubs)
        .split("\n")
        .filter((l) => /^\d+\. /.test(l)).length,
    ).toBeLessThanOrEqual(3);
    expect(ok(r.path)).toStartWith(`Shortest path from ${short("wal")} to ${short("deploy")}`);
  });

  test("update: changed fields before and after; content change re-embeds", async () => {
    const text = ok(r.update);
    expect(text).toContain(`Updated memory ${short(`upd-${t}`)}`);
    expect(text).toContain(`- content before:\nPort 8787 is the default of memsvc (${t} copy).\n- content after:\nPort 9999 is used in tests (${t} copy).`);
    expect(text).toContain("- project: memsvc → tests");
    expect(text).not.toContain("memory_type");
    const after = (await row(ids[`upd-${t}`]))!;
    expect(after.content).toBe(`Port 9999 is used in tests (${t} copy).`);
    expect(await vector(after.seq)).not.toBe(vectorBefore);
  });

  test("history: earlier versions newest first; restore brings one back and keeps what it replaced", async () => {
    expect(ok(r["hist-none"])).toContain("has no earlier versions");
    ok(r["hist-update"]);
    const text = ok(r.hist);
    expect(text).toContain(`Memory ${short(`hist-${t}`)} (${ids[`hist-${t}`]}): 1 earlier version, newest first.`);
    expect(text).toContain(`The release branch is cut on Thursdays (${t}).`);
    expect(text).toMatch(/version 1 · replaced \d{4}-\d\d-\d\dT[\d:.]+Z by update · experience · project memsvc/);
    expect(text).toContain(`The release branch is cut on Tuesdays (${t}).`);
    expect(ok(r["hist-restore"])).toStartWith("Restored version 1.\nUpdated memory");
    expect((await row(ids[`hist-${t}`]))!.content).toBe(`The release branch is cut on Tuesdays (${t}).`);
    const after = ok(r["hist-after"]);
    expect(after).toContain("2 earlier versions");
    expect(after).toMatch(/version 2 · replaced .* by restore/);
    expect(err(r["e-hist-version"])).toContain("has no version 99");
    expect(err(r["e-hist-zero"])).toContain("restore must be at least 1");
  });

  test("delete: preview; the memory, its embedding and links are gone", async () => {
    const text = ok(r.delete);
    expect(text).toContain(`Deleted memory ${short(`del-${t}`)} (${ids[`del-${t}`]}) permanently, with its embedding and `);
    expect(text).toContain(`Temporary scratch memory about zebra crossings (${t}).`);
    expect(await row(ids[`del-${t}`])).toBeNull();
    const [{ n: links }] = await dbRows<{ n: number }>(srv.services, "SELECT count(*) AS n FROM links WHERE from_id = ? OR to_id = ?", [
      ids[`del-${t}`],
      ids[`del-${t}`],
    ]);
    expect(links).toBe(0);
    expect(err(r["e-deleted"])).toContain("no memory with id");
  });

  test("bad input: isError results with a message naming the fix; the session still answers", () => {
    expect(err(r["e-missing"])).toContain("query is required");
    expect(err(r["e-type"])).toContain("limit must be a number");
    expect(err(r["e-extra"])).toContain('Unrecognized key: "privacy"');
    expect(err(r["e-range"])).toContain("days must be at least 1");
    expect(err(r["e-minscore"])).toContain("min_score must be a number from 0 to 1");
    expect(ok(r["search-floor"])).toBe(
      'No memories found for "what is the capital of France" scoring at least 0.3. Try other words, a lower min_score, drop the project filter, or use memsvc_recent.',
    );
    expect(err(r["e-unknown"])).toContain("no memory with id prefix 00000000\nFind ids with memsvc_search or memsvc_recent.");
    const amb = err(r["e-ambiguous"]);
    expect(amb).toContain(`id prefix ${short("twin1")} matches several memories`);
    expect(amb).toContain(`- ${ids.twin1}: Twin memory one about lighthouses.`);
    expect(amb).toContain(`- ${ids.twin2}: Twin memory two about lighthouses.`);
    expect(err(r["e-badid"])).toContain("id must be a memory UUID or its first 8");
    expect(err(r["e-op"])).toContain('operation must be one of "neighbors", "hubs", "path", got "export"');
    expect(err(r["e-path"])).toContain('operation "path" needs target_id');
    expect(err(r["e-neighbors"])).toContain('operation "neighbors" needs id');
    expect(err(r["e-misplaced"])).toContain('id does not apply to operation "hubs"');
    expect(err(r["e-nothing"])).toContain("nothing to update: give content, project or memory_type");
    expect(err(r["e-memtype"])).toContain("memory_type must be one of knowledge, experience, decisions, learnings");
    expect(err(r["e-section"])).toBe('no identity section "nosuch" (sections: soul, memory)');
    expect(ok(r.after)).toContain(short("idle"));
  });
});
