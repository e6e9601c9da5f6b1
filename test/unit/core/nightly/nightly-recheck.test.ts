import { afterEach, describe, expect, test } from "bun:test";
import { distill } from "../../../../src/core/distill";
import { pickEvidence } from "../../../../src/core/distill/evidence";
import { fetchMemory, markStale, memoryHistory } from "../../../../src/core/memories";
import { ingestMemory } from "../../../../src/core/ingest";
import { NightlyInterrupted, runNightly, type NightlyProgress } from "../../../../src/core/nightly";
import { exportAll, importAll } from "../../../../src/core/memories";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { markKey, parseVerdict } from "../../../../src/core/nightly/recheck";
import { DISTILL_EVIDENCE_MAX_CHARS } from "../../../../src/core/distill/tuning";
import { createLlmClient } from "../../../../src/llm/client";
import { dbRows } from "../../../helpers/engine";
import { memoriesReply, useFakeLlm } from "../../../helpers/fake-llm";
import { makeServices, type TestServices } from "../../../helpers/services";

const DAY = "2026-03-10";
const REPO = "example.com/acme/shop";
const C1 = "a".repeat(40);
const HEAD = "b".repeat(40);
let clock = Date.parse("2026-03-11T03:30:00Z");
const fake = useFakeLlm();
const open: TestServices[] = [];

afterEach(async () => {
  clock = Date.parse("2026-03-11T03:30:00Z");
  while (open.length) await open.pop()!.close();
});

function services(opts: { model?: boolean; timeoutMs?: number; nightly?: Record<string, unknown>; distill?: Record<string, unknown> } = {}): TestServices {
  const llm = opts.model === false ? {} : { llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: opts.timeoutMs ?? 5000 } };
  const s = makeServices({
    now: () => clock,
    config: { ...llm, nightly: { enabled: true, ...opts.nightly }, ...(opts.distill ? { distill: opts.distill } : {}) },
  });
  open.push(s);
  return s;
}

/** An anchored memory from two days before DAY (so the learn step has nothing to read) with its evidence. */
async function anchored(s: TestServices, content: string, paths: string[], evidence: string | null = `user: ${content}`): Promise<string> {
  const r = await ingestMemory(s, { content, project: "shop", session_date: "2026-03-08", anchors: { repo: REPO, branch: "main", commit: C1, paths } });
  await s.storage.memories.upsertAnchors([{ memoryId: r.id!, repo: REPO, branch: "main", commit: C1, paths, anchoredAt: clock, evidence }]);
  return r.id!;
}

const changed = (id: string, paths: string[], commits = 2) => ({
  id,
  reason: "changed" as const,
  changed_paths: paths,
  missing_paths: [],
  commits,
  last_change: "2026-03-09T10:00:00Z",
});
const anchorOf = async (s: TestServices, id: string) => (await fetchMemory(s, id)).memory.anchors?.[0];
const staleIds = async (s: TestServices) => (await s.storage.memories.staleAnchors(100)).map((a) => a.memoryId).sort();

describe("the nightly re-check of stale memories", () => {
  test("confirm clears the mark and moves the anchor to the commit the mark was made at; rewrite keeps history; retire deletes", async () => {
    const s = services();
    const keep = await anchored(s, "The orders table is migrated by scripts/backfill.ts in batches of 500 rows.", ["scripts/backfill.ts"]);
    const edit = await anchored(s, "Webhook retries live in src/webhooks/retry.ts with a 3 attempt limit.", ["src/webhooks/retry.ts"]);
    const gone = await anchored(s, "The legacy CSV exporter in src/export/csv.ts streams rows one by one.", ["src/export/csv.ts", "src/export/index.ts"]);
    await markStale(s, {
      repo: REPO,
      head: HEAD,
      marks: [
        changed(keep, ["scripts/backfill.ts"]),
        changed(edit, ["src/webhooks/retry.ts"], 5),
        { ...changed(gone, []), reason: "missing", missing_paths: ["src/export/csv.ts"] },
      ],
    });
    const rewritten = "Webhook retries live in src/webhooks/retry.ts; as of 2026-03-09 the file changed in 5 commits, so check its attempt limit there.";
    fake.fallback = (req) => {
      const text = req.raw;
      if (text.includes("scripts/backfill.ts in batches")) return { json: { verdict: "confirm", reason: "the changes do not touch the batch size" } };
      if (text.includes("Webhook retries live")) return { json: { verdict: "rewrite", content: rewritten, reason: "the limit may have moved" } };
      return { json: { verdict: "retire", reason: "the exporter is gone" } };
    };
    const out = await runNightly(s, { day: DAY });
    expect(fake.requests.length).toBe(3);
    // What reached the model: the memory, its evidence and what changed; nothing else is on the server to send.
    const prompt = fake.requests.find((r) => r.raw.includes("scripts/backfill.ts in batches"))!.raw;
    expect(prompt).toContain("user: The orders table is migrated");
    expect(prompt).toContain("scripts/backfill.ts changed in 2 commits since");
    expect(out.digest!.recheck).toMatchObject({ due: 3, confirmed: 1, rewritten: 1, retired: 1, unusable: 0, failed: 0 });
    expect(out.digest!.model_calls).toBe(3);
    expect(out.digest!.steps.recheck).toBe("done");
    expect(out.message).toContain("confirmed 1, rewrote 1, retired 1");

    const a = await anchorOf(s, keep);
    expect(a).toMatchObject({ commit: HEAD, paths: ["scripts/backfill.ts"], confirmed_at: new Date(clock).toISOString() });
    expect(a!.stale).toBeUndefined();

    const m = (await fetchMemory(s, edit)).memory;
    expect(m.content).toBe(rewritten);
    expect(m.anchors![0]).toMatchObject({ commit: HEAD });
    expect(m.anchors![0].stale).toBeUndefined();
    const h = await memoryHistory(s, edit);
    expect(h.versions.map((v) => [v.reason, v.content])).toEqual([["recheck", "Webhook retries live in src/webhooks/retry.ts with a 3 attempt limit."]]);
    // Re-embedded: the stored vector is the new text's.
    const [vec] = await s.embedder.embed([rewritten], "document");
    const stored = await s.storage.nightly.vectorOf((await s.storage.memories.memoryById(edit))!.seq);
    expect(
      Array.from(stored!)
        .slice(0, 8)
        .map((x) => x.toFixed(4)),
    ).toEqual(
      Array.from(vec)
        .slice(0, 8)
        .map((x) => x.toFixed(4)),
    );

    await expect(fetchMemory(s, gone)).rejects.toThrow(/no memory/);
    expect(await dbRows(s, "SELECT memory_id FROM memory_anchors WHERE memory_id = ?", [gone])).toEqual([]);
    expect(await staleIds(s)).toEqual([]);
  });

  test("confirm of a missing file drops that path; with none left, or a deleted repository, the anchor goes", async () => {
    const s = services();
    const partly = await anchored(s, "The exporter config sits in config/export.yml next to src/export.ts for the shop.", [
      "config/export.yml",
      "src/export.ts",
    ]);
    const wholly = await anchored(s, "The old cron entry in ops/cron.txt runs the nightly export at two.", ["ops/cron.txt"]);
    await markStale(s, {
      repo: REPO,
      head: HEAD,
      marks: [
        { ...changed(partly, []), reason: "missing", missing_paths: ["src/export.ts"] },
        { ...changed(wholly, []), reason: "missing", missing_paths: ["ops/cron.txt"] },
      ],
    });
    fake.fallback = () => ({ json: { verdict: "confirm", reason: "still true as history" } });
    await runNightly(s, { day: DAY });
    expect(await anchorOf(s, partly)).toMatchObject({ commit: HEAD, paths: ["config/export.yml"] });
    expect((await fetchMemory(s, wholly)).memory.anchors).toBeUndefined();
    expect((await fetchMemory(s, wholly)).memory.content).toContain("ops/cron.txt");
  });

  test("a nonsense answer changes nothing, is logged, and the same mark is not asked about again; new changes are", async () => {
    const s = services();
    const id = await anchored(s, "The payment client in src/pay/client.ts retries twice on HTTP 502.", ["src/pay/client.ts"]);
    await markStale(s, { repo: REPO, head: HEAD, marks: [changed(id, ["src/pay/client.ts"])] });
    fake.script({ json: { verdict: "probably fine" } });
    const first = await runNightly(s, { day: DAY });
    expect(first.digest!.recheck).toMatchObject({ due: 1, unusable: 1, confirmed: 0, rewritten: 0, retired: 0 });
    expect(first.digest!.recheck!.checks[0]).toMatchObject({ id: id.slice(0, 8), verdict: "unusable" });
    expect(s.logs.some((l) => l.level === "warn" && l.message.includes("no usable verdict"))).toBe(true);
    expect((await fetchMemory(s, id)).memory.content).toBe("The payment client in src/pay/client.ts retries twice on HTTP 502.");
    expect(await staleIds(s)).toEqual([id]);
    // The client sends the same changes again (a new session start, a newer unrelated HEAD): no second call.
    await markStale(s, { repo: REPO, head: "c".repeat(40), marks: [changed(id, ["src/pay/client.ts"])] });
    const second = await runNightly(s, { day: "2026-03-09" });
    expect(fake.requests.length).toBe(1);
    expect(second.digest!.recheck!.due).toBe(0);
    // A newer commit touching the file is a new mark: asked again (garbage text this time, still no change).
    await markStale(s, { repo: REPO, head: "d".repeat(40), marks: [changed(id, ["src/pay/client.ts"], 3)] });
    fake.script({ text: "I think the memory is fine, but who knows." });
    const third = await runNightly(s, { day: "2026-03-05" });
    expect(fake.requests.length).toBe(2);
    expect(third.digest!.recheck).toMatchObject({ due: 1, unusable: 1 });
    expect(await staleIds(s)).toEqual([id]);
  });

  test("a hanging model: the call times out, nothing changes, the next run asks again", async () => {
    const s = services({ timeoutMs: 400 });
    const id = await anchored(s, "Search indexes are rebuilt by scripts/reindex.ts every Sunday night.", ["scripts/reindex.ts"]);
    await markStale(s, { repo: REPO, head: HEAD, marks: [changed(id, ["scripts/reindex.ts"])] });
    fake.script({ hang: true });
    const out = await runNightly(s, { day: DAY });
    expect(out.digest!.recheck).toMatchObject({ due: 1, failed: 1, confirmed: 0 });
    expect(out.digest!.errors.join(" ")).toContain("did not answer");
    expect(out.digest!.skipped.find((x) => x.step === "recheck")).toMatchObject({ memories: 1 });
    expect(await staleIds(s)).toEqual([id]);
    fake.script({ json: { verdict: "confirm", reason: "unchanged behaviour" } });
    const next = await runNightly(s, { day: "2026-03-09" });
    expect(next.digest!.recheck).toMatchObject({ confirmed: 1 });
    expect(await staleIds(s)).toEqual([]);
  });

  test("the model-call cap bounds the step; the rest keep their mark and are re-checked by a later run", async () => {
    const s = services({ nightly: { maxModelCalls: 2 } });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await anchored(s, `Service ${i} keeps its rate limits in src/limits/s${i}.ts per tenant.`, [`src/limits/s${i}.ts`]));
    await markStale(s, { repo: REPO, head: HEAD, marks: ids.map((id, i) => changed(id, [`src/limits/s${i}.ts`])) });
    fake.fallback = () => ({ json: { verdict: "confirm", reason: "fine" } });
    const out = await runNightly(s, { day: DAY });
    expect(fake.requests.length).toBe(2);
    expect(out.digest!.recheck).toMatchObject({ due: 3, confirmed: 2 });
    expect(out.digest!.skipped.find((x) => x.step === "recheck")).toMatchObject({ memories: 1 });
    expect((await staleIds(s)).length).toBe(1);
    await runNightly(s, { day: "2026-03-09" });
    expect(await staleIds(s)).toEqual([]);
  });

  test("interrupted between memories, the run resumes with the rest and asks no memory twice; a dry run asks nothing", async () => {
    const s = services();
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push(await anchored(s, `Queue ${i} drains through src/queues/q${i}.ts with a visibility timeout of 30 s.`, [`src/queues/q${i}.ts`]));
    await markStale(s, { repo: REPO, head: HEAD, marks: ids.map((id, i) => changed(id, [`src/queues/q${i}.ts`])) });
    fake.fallback = () => ({ json: { verdict: "confirm", reason: "fine" } });
    const dry = await runNightly(s, { day: DAY, dryRun: true });
    expect(dry.digest!.recheck).toMatchObject({ due: 3, confirmed: 0 });
    expect(dry.digest!.model_calls).toBe(3);
    expect(fake.requests.length).toBe(0);
    const abort = new AbortController();
    let asked = 0;
    const progress = (e: NightlyProgress) => {
      if (e.step === "recheck" && e.message.startsWith("asking") && ++asked === 2) abort.abort();
    };
    await expect(runNightly(s, { day: DAY, signal: abort.signal, progress })).rejects.toBeInstanceOf(NightlyInterrupted);
    expect((await staleIds(s)).length).toBeLessThan(3);
    const resumed = await runNightly(s, { day: DAY });
    expect(resumed.digest).toMatchObject({ resumed: 1, status: "done" });
    expect(resumed.digest!.recheck).toMatchObject({ due: 3, confirmed: 3 });
    expect(fake.requests.length).toBe(3);
    expect(new Set(fake.requests.map((r) => /<memory>\n(.*)\n<\/memory>/.exec(r.body.messages[1].content)![1])).size).toBe(3);
    expect(await staleIds(s)).toEqual([]);
  });

  test("an export carries the evidence; an import redacts a secret planted in it", async () => {
    const s = services();
    const id = await anchored(
      s,
      "The signing key for webhooks is rotated by scripts/rotate-key.ts monthly.",
      ["scripts/rotate-key.ts"],
      "assistant: rotate with scripts/rotate-key.ts monthly",
    );
    const dir = mkdtempSync(join(tmpdir(), "memsvc-recheck-export-"));
    const file = join(dir, "export.jsonl");
    await exportAll(s.storage, s.config.paths.identity, file, { vectors: false });
    const secret = `ghp_${"Planted7Secret".repeat(3)}`;
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .map((l) => (l.startsWith('{"kind":"anchor"') ? JSON.stringify({ ...JSON.parse(l), evidence: `assistant: the token ${secret} rotates monthly` }) : l));
    expect(lines.some((l) => l.includes(secret))).toBe(true);
    writeFileSync(file, lines.join("\n"));
    const t = services();
    await importAll(t, file);
    expect(await t.storage.memories.evidenceOf(id)).toEqual([{ repo: REPO, evidence: "assistant: the token [REDACTED:github-token] rotates monthly" }]);
  });

  test("without a model, or without evidence, the marks stay and the digest says the re-check is owed", async () => {
    const s = services({ model: false });
    const id = await anchored(s, "Feature flags are read from config/flags.json at startup only.", ["config/flags.json"]);
    const bare = await anchored(s, "The CDN purge runs from scripts/purge.sh after each release.", ["scripts/purge.sh"], null);
    await markStale(s, { repo: REPO, head: HEAD, marks: [changed(id, ["config/flags.json"]), changed(bare, ["scripts/purge.sh"])] });
    const out = await runNightly(s, { day: DAY });
    expect(out.digest!.recheck).toMatchObject({ due: 2, no_evidence: 1, confirmed: 0 });
    const reasons = out.digest!.skipped.filter((x) => x.step === "recheck").map((x) => x.reason);
    expect(reasons.join(" | ")).toContain("re-check owed");
    expect(reasons.join(" | ")).toContain("no evidence");
    expect(out.message).toContain("re-check owed");
    expect(out.digest!.steps.recheck).toBe("incomplete");
    expect(await staleIds(s)).toEqual([id, bare].sort());
    // The next run with a model configured pays it back; the memory without evidence keeps its mark.
    const withModel = makeServices({
      home: s.config.home,
      now: () => clock,
      config: { llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 5000 }, nightly: { enabled: true } },
    });
    open.push(withModel);
    fake.fallback = () => ({ json: { verdict: "confirm", reason: "fine" } });
    const next = await runNightly(withModel, { day: "2026-03-09" });
    expect(next.digest!.recheck).toMatchObject({ due: 2, no_evidence: 1, confirmed: 1 });
    expect(next.digest!.steps.recheck).toBe("done");
    expect(await staleIds(withModel)).toEqual([bare]);
  });

  test("distill.keepEvidence false: nothing is kept, and the re-check leaves the marks alone", async () => {
    const s = services({ distill: { keepEvidence: false } });
    fake.script(
      memoriesReply({
        content: "The invoice job in jobs/invoice.ts runs at 02:00 UTC and retries three times.",
        memory_type: "knowledge",
        evidence: ["the invoice job runs at 02:00 UTC"],
      }),
    );
    const text = "user: when does the invoice job run?\nassistant: the invoice job runs at 02:00 UTC from jobs/invoice.ts and retries three times.";
    const r = (await distill(
      s,
      { text, session_id: "s-off", segment_id: "1", project: "shop", anchors: { repo: REPO, commit: C1, paths: ["jobs/invoice.ts"] } },
      createLlmClient(s.config.llm, s.config.paths.state),
    )) as { ids: string[] };
    expect(r.ids.length).toBe(1);
    expect(await s.storage.memories.evidenceOf(r.ids[0])).toEqual([]);
    await markStale(s, { repo: REPO, head: HEAD, marks: [changed(r.ids[0], ["jobs/invoice.ts"])] });
    const out = await runNightly(s, { day: DAY });
    expect(fake.requests.length).toBe(1);
    expect(out.digest!.recheck).toMatchObject({ no_evidence: 1, confirmed: 0 });
    expect(await staleIds(s)).toEqual(r.ids);
  });
});

describe("evidence kept at /distill", () => {
  const SECRET = `ghp_${"Evidence7Secret".repeat(3)}`;
  const segment = [
    "user: where do we rotate the deploy token?",
    `assistant: the deploy token ${SECRET} is rotated by scripts/rotate.ts every 30 days`,
    "user: thanks, and the coffee machine on floor 3 is broken again",
    "assistant: noted, the rotation job also posts to the ops channel when scripts/rotate.ts finishes",
  ].join("\n");

  test("the model's quoted lines, checked against the segment and redacted; the segment itself is not stored", async () => {
    const s = services();
    fake.script(
      memoriesReply({
        content: "The deploy token is rotated by scripts/rotate.ts every 30 days and the job posts to the ops channel.",
        memory_type: "knowledge",
        evidence: [`the deploy token ${SECRET} is rotated by scripts/rotate.ts every 30 days`, "a line the model made up about rotation"],
      }),
    );
    const r = (await distill(
      s,
      { text: segment, session_id: "s-ev", segment_id: "1", project: "shop", anchors: { repo: REPO, commit: C1, paths: ["scripts/rotate.ts"] } },
      createLlmClient(s.config.llm, s.config.paths.state),
    )) as { ids: string[] };
    const [ev] = await s.storage.memories.evidenceOf(r.ids[0]);
    expect(ev.repo).toBe(REPO);
    expect(ev.evidence).toBe("assistant: the deploy token [REDACTED:github-token] is rotated by scripts/rotate.ts every 30 days");
    // Not returned by default; with ?evidence it is.
    expect((await fetchMemory(s, r.ids[0])).memory.evidence).toBeUndefined();
    expect((await fetchMemory(s, r.ids[0], { evidence: "true" })).memory.evidence).toEqual([ev]);
    await expect(fetchMemory(s, r.ids[0], { evidence: "maybe" })).rejects.toThrow(/evidence must be true or false/);
    // No secret, and not the segment: nothing in the database holds the coffee machine line or the whole text.
    const dump = JSON.stringify(await dbRows(s, "SELECT * FROM memory_anchors")) + JSON.stringify(await dbRows(s, "SELECT content FROM memories"));
    expect(dump).not.toContain(SECRET);
    expect(dump).not.toContain("coffee machine");
  });

  test("without quotes the lines sharing the memory's words are picked, bounded, in segment order", async () => {
    const lines = Array.from({ length: 200 }, (_, i) =>
      i % 7 === 0 ? `assistant: the rotation job in scripts/rotate.ts step ${i} checks the token age` : `tool: unrelated output line ${i}`,
    );
    const ev = (await pickEvidence(lines.join("\n"), "The rotation job in scripts/rotate.ts checks the token age.", []))!;
    expect(ev.length).toBeLessThanOrEqual(DISTILL_EVIDENCE_MAX_CHARS);
    const picked = ev.split("\n");
    expect(picked.length).toBeGreaterThan(5);
    expect(picked.every((l) => l.includes("rotation job"))).toBe(true);
    const steps = picked.map((l) => Number(/step (\d+)/.exec(l)![1]));
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(await pickEvidence("user: hello\nassistant: hi", "Postgres listens on 5433.", [])).toBeNull();
    // A secret only recognisable once lines are re-joined or cut is redacted in the excerpt too.
    const withSecret = await pickEvidence(`assistant: the rotation token is ${SECRET}`, "The rotation token.", []);
    expect(withSecret).toBe("assistant: the rotation token is [REDACTED:github-token]");
  });
});

describe("verdict parsing and mark identity", () => {
  test("verdicts", () => {
    expect(parseVerdict({ verdict: "Confirm", reason: "ok" })).toEqual({ verdict: "confirm", reason: "ok" });
    expect(parseVerdict({ verdict: "retire" })).toEqual({ verdict: "retire", reason: "" });
    expect(parseVerdict({ verdict: "rewrite", content: "short" })).toBeNull();
    expect(parseVerdict({ verdict: "rewrite", content: "A long enough new text for the memory." })).toMatchObject({ verdict: "rewrite" });
    expect(parseVerdict({ verdict: "rewrite", content: "x".repeat(5000) })).toBeNull();
    expect(parseVerdict({ verdict: "delete" })).toBeNull();
    expect(parseVerdict([{ verdict: "confirm" }])).toBeNull();
    expect(parseVerdict(null)).toBeNull();
  });

  test("two marks of the same changes are one mark, whatever HEAD and time; other counts are another", () => {
    const m = {
      reason: "changed",
      changed_paths: ["b", "a"],
      missing_paths: [],
      commits: 2,
      last_change: "2026-01-01T00:00:00.000Z",
      head: "aaaaaaa",
      checked_at: "x",
    };
    expect(markKey(JSON.stringify(m))).toBe(markKey(JSON.stringify({ ...m, head: "bbbbbbb", checked_at: "y", changed_paths: ["a", "b"] })));
    expect(markKey(JSON.stringify(m))).not.toBe(markKey(JSON.stringify({ ...m, commits: 3 })));
  });
});
