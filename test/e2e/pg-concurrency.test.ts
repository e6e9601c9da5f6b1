import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { ingestMemory } from "../../src/core/ingest";
import type { NightlyDigest } from "../../src/core/nightly";
import { NoteGenerator } from "../../bench/lib/corpus";
import { engineEnv, homeRows, onPostgres } from "../helpers/engine";
import { memoriesReply, useFakeLlm } from "../helpers/fake-llm";
import { BUN, childEnv, freePort, startProcess, tempHome, type Running } from "../helpers/process";
import { makeServices, type TestServices } from "../helpers/services";
import { adminToken } from "../helpers/tokens";

// Two real `memsvc server` processes over one PostgreSQL database (on CI a
// real PostgreSQL 15: each server has its own pool of real backends), hit at
// once by writers on both: ingest, distill (the fake model), recall-index
// (session suppression rows both servers upsert), PATCH and DELETE, while
// both servers' nightly schedules (every second) race to consolidate
// yesterday. Whatever the database serialises or aborts, a client sees a
// success or a 503 to retry, never a 500, and every write a client was told
// succeeded is in the database afterwards. PostgreSQL only: on SQLite one
// server owns a home (server.lock).

const DAY_MS = 86_400_000;
const SECONDS = 12;
const WORKERS_PER_SERVER = 4;
const fake = useFakeLlm();
const servers: Running[] = [];
const open: TestServices[] = [];
afterAll(async () => {
  for (const s of servers) s.proc.kill("SIGKILL");
  for (const s of open) await s.close();
});

describe.skipIf(!onPostgres)("two servers over one PostgreSQL database under concurrent writes (PostgreSQL only)", () => {
  test("ingest, distill, suppression, PATCH, DELETE and the nightly on two servers at once: only 2xx or 503, no acknowledged write lost, the night runs once", async () => {
    const yesterday = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
    const config = { llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 20_000 }, nightly: { enabled: true, schedule: "* * * * * *" } };
    const view = makeServices({ config });
    open.push(view);
    const gen = new NoteGenerator(7);
    // Yesterday's work for the night: three projects, so three model calls to consolidate.
    for (let i = 0; i < 12; i++) {
      const p = `proj-${"abc"[i % 3]}`;
      await ingestMemory(view, { content: `${gen.note().content} (night seed ${i})`, project: p, session_date: yesterday });
    }
    const home = view.config.home;
    let distilled = 0;
    fake.fallback = (req) => {
      const system: string = req.body.messages[0].content;
      if (system.startsWith("You review one day")) {
        const project = /Project: (proj-\w)/.exec(req.body.messages[1].content)?.[1] ?? "proj-a";
        return {
          json: { learnings: [{ content: `In ${project}, bump the version before generating the changelog, or the release fails.`, sources: [1] }] },
          delayMs: 2500,
        };
      }
      return { ...memoriesReply(`${gen.note().content} Distilled fact ${++distilled}, marker dz${distilled}q.`), delayMs: 30 };
    };

    const secondHome = tempHome();
    copyFileSync(join(home, "config.json"), join(secondHome, "config.json"));
    for (const h of [home, secondHome]) {
      const port = await freePort();
      // A small pool per server: contention on connections as well as rows.
      servers.push(
        await startProcess(
          [BUN, "src/main.ts", "server", "--port", String(port)],
          childEnv(h, { ...engineEnv(home), MEMSVC_DATABASE_POOL: "4" }),
          port,
          undefined,
          60_000,
        ),
      );
    }
    // Only database tokens authenticate on PostgreSQL: an admin token made with `memsvc token create` on the shared schema.
    const token = await adminToken(home, { writeConfig: false });
    const call = async (i: number, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${servers[i].url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json().catch(() => null)) as any };
    };

    const statuses = new Map<string, number>();
    const bad: string[] = [];
    const note = (what: string, status: number, body: unknown) => {
      statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1);
      if (status >= 500 && status !== 503) bad.push(`${what} ${status} ${JSON.stringify(body).slice(0, 300)}`);
      if (status === 503 && (body as any)?.error?.code !== "unavailable") bad.push(`${what} 503 without the error shape: ${JSON.stringify(body)}`);
    };
    const acknowledged = new Set<string>();
    const deleted = new Set<string>();
    /** id -> the content its last acknowledged PATCH set (each id is patched by one worker only). */
    const patched = new Map<string, string>();
    const sessions = ["s-1", "s-2", "s-3"];
    const until = Date.now() + SECONDS * 1000;

    const worker = async (server: number, w: number) => {
      const mine: string[] = [];
      for (let n = 0; Date.now() < until; n++) {
        const project = `proj-${"abc"[n % 3]}`;
        switch (n % 6) {
          case 0:
          case 1: {
            const r = await call(server, "POST", "/ingest", { content: `${gen.note().content} (worker ${server}.${w} write ${n})`, project });
            note("ingest", r.status, r.body);
            if (r.status === 201 || r.status === 200) {
              acknowledged.add(r.body.id);
              mine.push(r.body.id);
            }
            break;
          }
          case 2: {
            const r = await call(server, "POST", "/distill", {
              text: `user: what did we change in ${project}?\n\nassistant: ${gen.note().content}`,
              session_id: `d-${server}-${w}-${n}`,
              project,
            });
            note("distill", r.status, r.body);
            if (r.status === 201) for (const id of r.body.ids) acknowledged.add(id);
            break;
          }
          case 3: {
            const r = await call(server, "POST", "/recall-index", { session_id: sessions[n % sessions.length], prompt: gen.note().content, project });
            note("recall-index", r.status, r.body);
            break;
          }
          case 4: {
            const id = mine[Math.floor(mine.length / 2)];
            if (!id || deleted.has(id)) break;
            const content = `${gen.note().content} (patched by ${server}.${w} at ${n})`;
            const r = await call(server === 0 ? 1 : 0, "PATCH", "/memory", { id, content });
            note("patch", r.status, r.body);
            if (r.status === 200) patched.set(id, content);
            break;
          }
          case 5: {
            // Delete the oldest of this worker's writes that nobody patches.
            const id = mine.shift();
            if (!id || patched.has(id)) break;
            const r = await call(server, "DELETE", `/memory?id=${id}`);
            note("delete", r.status, r.body);
            if (r.status === 200) deleted.add(id);
            break;
          }
        }
      }
    };
    const work: Promise<void>[] = [];
    for (let server = 0; server < 2; server++) for (let w = 0; w < WORKERS_PER_SERVER; w++) work.push(worker(server, w));
    await Promise.all(work);

    // The night (three model calls of 2.5 s) overlaps the writers; it finishes once.
    const until2 = Date.now() + 60_000;
    while ((await view.storage.nightly.lastRun(yesterday))?.status !== "done") {
      if (Date.now() > until2) throw new Error(`the night did not finish: ${JSON.stringify(await view.storage.nightly.lastRun(yesterday))}`);
      await Bun.sleep(200);
    }
    const summary = [...statuses]
      .sort()
      .map(([k, v]) => `${k}: ${v}`)
      .join(", ");
    console.log(`two servers, ${SECONDS} s: ${summary}; ${acknowledged.size} acknowledged ids, ${deleted.size} deleted, ${patched.size} patched`);
    expect(acknowledged.size).toBeGreaterThan(20);
    expect(statuses.get("distill 201") ?? 0).toBeGreaterThan(0);

    const rows = await homeRows<{ id: string; content: string }>(home, "SELECT id, content FROM memories");
    const stored = new Map(rows.map((r) => [r.id, r.content]));
    const runs = await view.storage.nightly.latestRuns(100);
    const nights = runs.map((r) => JSON.parse(r.digest) as NightlyDigest).filter((d) => d.day === yesterday);
    // Every check in one object: a failure under load shows all that went wrong at once.
    // A 500's reference names its server-log entry: show it with the failure.
    const logged = (ref: string) =>
      servers
        .flatMap((sv) => sv.stderr().split("\n"))
        .map((line, i, all) => (line.includes(ref) ? all.slice(i, i + 8).join("\n") : ""))
        .filter(Boolean)
        .join("\n");
    expect({
      bad: bad.map((b) => {
        const ref = /reference ([0-9a-f]+)/.exec(b)?.[1];
        return ref ? `${b}\n${logged(ref)}` : b;
      }),
      lost: [...acknowledged].filter((id) => !deleted.has(id) && !stored.has(id)),
      resurrected: [...deleted].filter((id) => stored.has(id)),
      // Two workers can hold one id when ingest answers a duplicate with the stored memory; a
      // delete acknowledged after the PATCH wins, so only ids still stored are compared.
      stale: [...patched].filter(([id, content]) => !deleted.has(id) && stored.get(id) !== content).map(([id]) => id),
      nights: nights.map((d) => ({ status: d.status, written: d.written })),
    }).toEqual({ bad: [], lost: [], resurrected: [], stale: [], nights: [{ status: "done", written: 3 }] });
  }, 180_000);
});
