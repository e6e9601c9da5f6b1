import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportAll, importAll } from "../../src/core/memories";
import { MEMORY_HISTORY_MAX } from "../../src/core/memories/tuning";
import { dbRow, dbRows } from "../helpers/engine";
import { storedVector } from "../helpers/stored-vector";
import { makeServices } from "../helpers/services";
import { postJson, startServer, type TestServer } from "../helpers/server";

/** Earlier versions of a memory over REST: recorded on PATCH, listed, restored, bounded, deleted with it, exported. */

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(() => srv.stop());

const ingest = async (content: string, project = "hist") => ((await (await postJson(`${srv.url}/ingest`, { content, project })).json()) as { id: string }).id;
const patch = (body: unknown) => fetch(`${srv.url}/memory`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const history = async (id: string) => {
  const res = await fetch(`${srv.url}/memory/history?id=${id}`);
  return { status: res.status, body: (await res.json()) as any };
};
const restore = async (body: unknown) => {
  const res = await postJson(`${srv.url}/memory/restore`, body);
  return { status: res.status, body: (await res.json()) as any };
};
const sql = <T>(q: string, ...args: any[]) => dbRows<T>(srv.services, q, args);

describe("GET /memory/history and POST /memory/restore", () => {
  test("PATCH keeps the replaced text; history lists it newest first; restore brings it back and keeps what it replaced", async () => {
    const id = await ingest("The nightly backup runs at 02:00 UTC on the ops host.");
    expect((await history(id.slice(0, 8))).body).toMatchObject({ id, short_id: id.slice(0, 8), versions: [] });
    expect((await patch({ id, content: "The nightly backup runs at 03:30 UTC on the ops host." })).status).toBe(200);
    expect((await patch({ id, project: "ops" })).status).toBe(200);
    const h = await history(id.slice(0, 8));
    expect(h.status).toBe(200);
    expect(h.body.current).toMatchObject({ content: "The nightly backup runs at 03:30 UTC on the ops host.", project: "ops" });
    expect(h.body.versions.map((v: any) => [v.version, v.reason, v.content, v.project])).toEqual([
      [2, "update", "The nightly backup runs at 03:30 UTC on the ops host.", "hist"],
      [1, "update", "The nightly backup runs at 02:00 UTC on the ops host.", "hist"],
    ]);
    expect(h.body.versions[0].replaced_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    const r = await restore({ id: id.slice(0, 8), version: 1 });
    expect(r.status).toBe(200);
    expect(r.body.restored_version).toBe(1);
    expect(r.body.memory.content).toBe("The nightly backup runs at 02:00 UTC on the ops host.");
    expect(r.body.memory.project).toBe("hist");
    expect(Object.keys(r.body.changes).sort()).toEqual(["content", "project"]);
    const after = await history(id);
    expect(after.body.versions[0]).toMatchObject({
      version: 3,
      reason: "restore",
      content: "The nightly backup runs at 03:30 UTC on the ops host.",
      project: "ops",
    });
    // The restored text is searchable again: it was re-embedded and re-indexed.
    const found = (await (await fetch(`${srv.url}/search?query=${encodeURIComponent("nightly backup 02:00")}&project=hist`)).json()) as any;
    expect(found.results[0].id).toBe(id);
  });

  test("a PATCH that changes nothing records nothing", async () => {
    const id = await ingest("Unchanged memories have no history rows at all.");
    await patch({ id, content: "Unchanged memories have no history rows at all." });
    expect((await history(id)).body.versions).toEqual([]);
  });

  test(`bounded: only the last ${MEMORY_HISTORY_MAX} versions are kept, numbers keep counting`, async () => {
    const id = await ingest("Counter value 0 for the bounded history test.");
    for (let i = 1; i <= MEMORY_HISTORY_MAX + 5; i++)
      expect((await patch({ id, content: `Counter value ${i} for the bounded history test.` })).status).toBe(200);
    const v = (await history(id)).body.versions;
    expect(v).toHaveLength(MEMORY_HISTORY_MAX);
    expect(v[0].version).toBe(MEMORY_HISTORY_MAX + 5);
    expect(v.at(-1).version).toBe(6);
    expect(v.at(-1).content).toBe("Counter value 5 for the bounded history test.");
    expect((await restore({ id, version: 3 })).status).toBe(404);
  });

  test("deleting a memory deletes its history", async () => {
    const id = await ingest("A memory that will be forgotten together with its versions.");
    await patch({ id, content: "A memory that will be forgotten, second text." });
    expect((await sql<{ n: number }>("SELECT count(*) AS n FROM memory_history WHERE memory_id = ?", id))[0].n).toBe(1);
    expect((await fetch(`${srv.url}/memory?id=${id}`, { method: "DELETE" })).status).toBe(200);
    expect((await sql<{ n: number }>("SELECT count(*) AS n FROM memory_history WHERE memory_id = ?", id))[0].n).toBe(0);
    expect((await history(id)).status).toBe(404);
  });

  test("bad requests are 4xx with a message and change nothing", async () => {
    const id = await ingest("Memory for the bad restore requests.");
    await patch({ id, content: "Memory for the bad restore requests, edited." });
    const before = await sql<unknown>("SELECT * FROM memory_history WHERE memory_id = ?", id);
    expect((await history("")).status).toBe(400);
    expect((await history("zzzz")).status).toBe(400);
    expect((await history("00000000")).status).toBe(404);
    for (const [body, status, msg] of [
      [{ id }, 400, /version is required/],
      [{ id, version: 0 }, 400, /whole number/],
      [{ id, version: "x" }, 400, /whole number/],
      [{ id, version: 1.5 }, 400, /whole number/],
      [{ id, version: 9 }, 404, /no version 9/],
      [{ version: 1 }, 400, /id is required/],
      [{ id, version: 1, content: "x" }, 400, /unknown field/],
    ] as const) {
      const r = await restore(body);
      expect(r.status).toBe(status);
      expect(r.body.error.message).toMatch(msg);
    }
    expect(await sql<unknown>("SELECT * FROM memory_history WHERE memory_id = ?", id)).toEqual(before);
  });
});

describe("export and import", () => {
  test("versions travel in the export; an export without history records (older releases) still imports", async () => {
    const id = await ingest("Exported memory, first text.");
    await patch({ id, content: "Exported memory, second text." });
    const file = join(tmpdir(), `memsvc-hist-${crypto.randomUUID()}.jsonl`);
    await exportAll(srv.services.storage, srv.services.config.paths.identity, file, { vectors: false });
    const lines = (await Bun.file(file).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.kind === "history" && l.memory_id === id)).toEqual([
      expect.objectContaining({ version: 1, content: "Exported memory, first text.", reason: "update" }),
    ]);

    const fresh = makeServices();
    try {
      await importAll(fresh, file);
      const rows = await dbRows<{ content: string }>(fresh, "SELECT content FROM memory_history WHERE memory_id = ?", [id]);
      expect(rows).toEqual([{ content: "Exported memory, first text." }]);
    } finally {
      await fresh.close();
    }

    const old = join(tmpdir(), `memsvc-hist-old-${crypto.randomUUID()}.jsonl`);
    writeFileSync(
      old,
      `${lines
        .filter((l) => l.kind !== "history")
        .map((l) => JSON.stringify(l))
        .join("\n")}\n`,
    );
    const fresh2 = makeServices();
    try {
      const r = await importAll(fresh2, old);
      expect(r.memories).toBe(lines.filter((l) => l.kind === "memory").length);
      expect((await dbRow<{ n: number }>(fresh2, "SELECT count(*) AS n FROM memory_history"))!.n).toBe(0);
    } finally {
      await fresh2.close();
    }
  });

  test("import redacts secrets an older export holds, in memories and their versions, and embeds them anew", async () => {
    const id = await ingest("Harmless first text.");
    await patch({ id, content: "Harmless second text." });
    const file = join(tmpdir(), `memsvc-hist-secret-${crypto.randomUUID()}.jsonl`);
    await exportAll(srv.services.storage, srv.services.config.paths.identity, file, { vectors: true });
    const secret = `ghp_${"A1b2C3d4E5".repeat(3)}123456`;
    const edited = (await Bun.file(file).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .map((l) =>
        l.kind === "memory" && l.id === id
          ? { ...l, content: `Deploy token ${secret} in CI` }
          : l.kind === "history" && l.memory_id === id
            ? { ...l, content: `Old token ${secret}` }
            : l,
      );
    writeFileSync(file, `${edited.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const fresh = makeServices();
    try {
      await importAll(fresh, file);
      const mem = (await dbRow<{ content: string }>(fresh, "SELECT content FROM memories WHERE id = ?", [id]))!;
      expect(mem.content).toBe("Deploy token [REDACTED:github-token] in CI");
      const hist = await dbRows<{ content: string }>(fresh, "SELECT content FROM memory_history WHERE memory_id = ?", [id]);
      expect(hist.map((h) => h.content)).toEqual(["Old token [REDACTED:github-token]"]);
      // The exported vector embedded the secret's text: the stored one is the redacted content's.
      const [expected] = await fresh.embedder.embed([mem.content], "document");
      const seq = (await dbRow<{ seq: number }>(fresh, "SELECT seq FROM memories WHERE id = ?", [id]))!.seq;
      expect(await storedVector(fresh, seq)).toEqual(Array.from(expected));
    } finally {
      await fresh.close();
    }
  });

  test("a history record of a memory the file lacks, or with a bad field, imports nothing", async () => {
    const file = join(tmpdir(), `memsvc-hist-bad-${crypto.randomUUID()}.jsonl`);
    await exportAll(srv.services.storage, srv.services.config.paths.identity, file, { vectors: false });
    const text = await Bun.file(file).text();
    for (const extra of [
      {
        kind: "history",
        memory_id: "00000000-0000-4000-8000-000000000000",
        version: 1,
        content: "x",
        memory_type: "knowledge",
        project: null,
        reason: "update",
        replaced_at: 1,
      },
      {
        kind: "history",
        memory_id: "00000000-0000-4000-8000-000000000000",
        version: 0,
        content: "x",
        memory_type: "knowledge",
        reason: "update",
        replaced_at: 1,
      },
    ]) {
      writeFileSync(file, `${text}${JSON.stringify(extra)}\n`);
      const fresh = makeServices();
      try {
        await expect(importAll(fresh, file)).rejects.toThrow(/history/);
        expect((await dbRow<{ n: number }>(fresh, "SELECT count(*) AS n FROM memories"))!.n).toBe(0);
      } finally {
        await fresh.close();
      }
    }
  });
});
