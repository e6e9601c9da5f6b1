import { afterEach, expect, test } from "bun:test";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ingestMemory } from "../../src/core/ingest";
import type { NightlyDigest } from "../../src/core/nightly";
import { engineEnv, onPostgres } from "../helpers/engine";
import { useFakeLlm } from "../helpers/fake-llm";
import { BUN, childEnv, freePort, startProcess, tempHome, type Running } from "../helpers/process";
import { makeServices, type TestServices } from "../helpers/services";

// Real `memsvc server` processes over one database, each with its own nightly
// schedule firing every second: the night runs once, and when its owner is
// killed mid-run another server finishes it from the cursor. With
// MEMSVC_TEST_ENGINE=postgres the two servers (two homes, one schema)
// run side by side; on SQLite one server runs per home (server.lock), so the
// second starts on the same home once the owner is killed.

const DAY_MS = 86_400_000;
const fake = useFakeLlm();
const servers: Running[] = [];
const open: TestServices[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) s.proc.kill("SIGKILL");
  for (const s of open.splice(0)) await s.close();
});

const waitFor = async (what: () => Promise<boolean> | boolean, ms = 45_000) => {
  const until = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await Bun.sleep(100);
  }
};

test("two servers schedule the same night: one runs it; killed mid-run, the other takes over from the cursor and the day completes once", async () => {
  const yesterday = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
  const config = { llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 20_000 }, nightly: { enabled: true, schedule: "* * * * * *" } };
  // The test's own view of the database: seeds it, then reads the runs through the nightly store.
  const view = makeServices({ config });
  open.push(view);
  for (const p of ["a", "b", "c"]) {
    await ingestMemory(view, {
      content: `Project ${p}: the release failed because the changelog step ran before the version bump.`,
      project: `proj-${p}`,
      session_date: yesterday,
    });
  }
  const home = view.config.home;
  const lesson = (project: string) => ({
    json: { learnings: [{ content: `In ${project}, bump the version before generating the changelog, or the release fails.`, sources: [1] }] },
  });
  fake.fallback = (req) => lesson(/Project: (proj-\w)/.exec(req.body.messages[1].content)![1]);
  // Whoever owns the night first asks about proj-a and never hears back: it is killed while waiting.
  fake.script({ wait: new Promise(() => {}), then: lesson("proj-a") });

  const start = async (serverHome: string, env: Record<string, string>) => {
    const port = await freePort();
    const s = await startProcess([BUN, "src/main.ts", "server", "--port", String(port)], childEnv(serverHome, env), port, undefined, 60_000);
    servers.push(s);
    return s;
  };
  // PostgreSQL: the second server has a home of its own (the same config.json) over the first home's schema.
  const secondHome = onPostgres ? tempHome() : home;
  if (onPostgres) {
    copyFileSync(join(home, "config.json"), join(secondHome, "config.json"));
    await start(secondHome, engineEnv(home));
  }
  await start(home, engineEnv(home));
  await waitFor(() => fake.requests.length >= 1);
  const running = (await view.storage.nightly.lastRun(yesterday))!;
  expect(running.status).toBe("running");
  const pid = Number(running.owner.split(":")[1]);
  const owner = servers.find((s) => s.proc.pid === pid)!;
  expect(owner).toBeDefined();
  if (onPostgres) {
    // While the owner lives, the other server's schedule (every second) leaves the night alone.
    await Bun.sleep(2500);
    expect(fake.requests.length).toBe(1);
    expect((await view.storage.nightly.lastRun(yesterday))!.owner).toBe(running.owner);
  }

  owner.proc.kill("SIGKILL");
  await owner.proc.exited;
  const survivor = onPostgres ? servers.find((s) => s !== owner)! : await start(home, {});
  await waitFor(async () => (await view.storage.nightly.lastRun(yesterday))!.status === "done");
  const done = (await view.storage.nightly.lastRun(yesterday))!;
  expect(done.id).toBe(running.id);
  expect(done.owner).not.toBe(running.owner);
  expect(Number(done.owner.split(":")[1])).toBe(survivor.proc.pid!);
  const digest = JSON.parse(done.digest) as NightlyDigest;
  expect(digest).toMatchObject({ status: "done", resumed: 1, written: 3, read: 3, considered: 3 });
  // The proj-a call of the dead owner, then the survivor's three.
  expect(fake.requests.length).toBe(4);

  // One run per day for every day the schedules covered, however often both fired.
  const runs = await view.storage.nightly.latestRuns(100);
  const days = runs.map((r) => (JSON.parse(r.digest) as NightlyDigest).day);
  expect(days.length).toBe(new Set(days).size);
  expect(days).toContain(yesterday);
  const token = JSON.parse(readFileSync(join(secondHome, "config.json"), "utf8")).token;
  const learned = await (await fetch(`${survivor.url}/learnings?days=7`, { headers: { Authorization: `Bearer ${token}` } })).json();
  expect(learned.learnings.map((l: { project: string }) => l.project).sort()).toEqual(["proj-a", "proj-b", "proj-c"]);
}, 120_000);
