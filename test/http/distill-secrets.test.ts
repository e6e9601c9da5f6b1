import { describe, expect, test } from "bun:test";
import { insertMemoryRows } from "../../src/core/ingest";
import { distillHarness, storedText } from "../helpers/distill-server";
import { memoriesReply, type RecordedRequest } from "../helpers/fake-llm";
import { postJson } from "../helpers/server";
import { CORPUS } from "../fixtures/secrets/corpus";
import { PASSWORD_FORMS } from "../fixtures/secrets/password-forms";

// No test here times the model out: the short default (kept short for the hang tests) made the many-call
// secrets transcript fail with 503 on a loaded machine while the server was busy redacting.
const h = distillHarness({ timeoutMs: 30_000 });

// Secrets of one line can stand in a message role too (roles are cut to 40 characters after redaction).
const ONE_LINE = CORPUS.filter((c) => !c.secret.includes("\n") && !c.secret.includes("\\n"));
const LEGACY_SECRET = `ghp_${"Legacy9Token".repeat(3)}`;
const INGESTED_SECRET = "sk-proj-INGESTEDkey0123456789abcdefXYZ";
const LEGACY_PASSWORD = "L3gacy Pw9";

const dbBytes = () => storedText(h.srv.services);

/** What the model was sent: every message of every request, role included. */
const sentText = () =>
  [
    h.fake.receivedText(),
    ...h.fake.requests.flatMap((r) => (r.body?.messages ?? []).map((m: { role: string; content: string }) => `${m.role}\n${m.content}`)),
  ].join("\n");

/** A model that echoes every line it was shown as a memory, and adds every raw secret it "remembers". */
function echo(req: RecordedRequest) {
  const user = String(req.body?.messages?.find((m: { role: string }) => m.role === "user")?.content ?? "");
  const lines = user.split("\n").filter((l) => l.trim().length > 20);
  const reply = memoriesReply(
    ...lines.slice(0, 20).map((l) => `The session noted: ${l}`),
    ...CORPUS.slice(0, 15).map((c) => `The deploy credential is ${c.secret} for the checkout service.`),
  );
  // And entries that are no memory at all (kept as dropped previews), carrying secrets too.
  (reply as { json: { memories: unknown[] } }).json.memories.push(...CORPUS.slice(15, 30).map((c) => ({ note: `credential ${c.secret}` })));
  return reply;
}

describe("no secret reaches the model or the store", () => {
  test("a transcript carrying every corpus secret in text and roles, with secret-bearing memories as link context", async () => {
    const s = h.srv.services;
    // A memory stored through /ingest: redacted on the way in.
    const ing = await postJson(`${h.srv.url}/ingest`, {
      content: `The checkout service deploy reads the staging database password and the OpenAI key ${INGESTED_SECRET} from the shop env file.`,
      memory_type: "knowledge",
    });
    expect(ing.status).toBe(201);
    // A memory stored before redaction covered /ingest (written straight to the store).
    const legacyText = `The checkout service deploy pushes to the shop repo with the token ${LEGACY_SECRET} from the staging env file, via sshpass -p '${LEGACY_PASSWORD}' ssh deploy@staging.`;
    const [vector] = await s.embedder.embed([legacyText], "document");
    const [legacy] = await insertMemoryRows(
      s,
      [{ content: legacyText, memoryType: "knowledge", project: null, sourceAgent: "old", createdAt: s.now() }],
      [vector],
    );
    s.index.upsert(legacy.seq, vector, null);

    const intro = "The checkout service deploy to staging reads the shop env file; the token and the database password live there.";
    const messages = [
      { role: "user", content: intro },
      ...CORPUS.map((c, i) => ({ role: i < ONE_LINE.length ? ONE_LINE[i].secret : "assistant", content: `${intro}\n${c.text}` })),
      // Passwords on command lines and in words (issue 39), as the user typed them and as tool calls ran them.
      ...PASSWORD_FORMS.map((f, i) => ({ role: i % 2 ? "user" : "tool", content: `${intro}\n${f.text}` })),
    ];
    h.fake.fallback = echo;
    const r = await h.post({ messages, session_id: "all-secrets", segment_id: "1" });
    expect(r.status).toBe(201);
    expect(h.fake.requests.length).toBeGreaterThan(1);

    const sent = sentText();
    // The memories were really offered as link context, redacted.
    expect(sent).toContain(legacy.id.slice(0, 8));
    expect(sent).toContain("Existing memories you may link to");
    for (const c of CORPUS) expect(sent).not.toContain(c.secret);
    for (const f of PASSWORD_FORMS) expect(sent).not.toContain(f.secret);
    expect(sent).not.toContain(LEGACY_SECRET);
    expect(sent).not.toContain(LEGACY_PASSWORD);
    expect(sent).not.toContain(INGESTED_SECRET);
    expect(sent).toContain("[REDACTED:");

    // The echoing model's memories were stored, with no secret in them, nor anywhere in the file.
    const stored = await h.sql<{ content: string }>("SELECT content FROM memories WHERE source_session = 'all-secrets'");
    expect(stored.length).toBeGreaterThan(0);
    const bytes = await dbBytes();
    for (const c of [...CORPUS, ...PASSWORD_FORMS]) {
      for (const m of stored) expect(m.content).not.toContain(c.secret);
      // A 4-digit PIN could turn up by chance among a database file's bytes; the rows above hold none.
      if (c.secret.length >= 6) expect(bytes).not.toContain(c.secret);
    }
    expect(bytes).not.toContain(INGESTED_SECRET);
    const logs = h.srv.services.logs.map((l) => l.message).join("\n");
    expect(logs).toContain("not a memory");
    for (const c of CORPUS) expect(logs).not.toContain(c.secret);
  });

  test("PATCH /memory and the MCP-shared core redact the new content", async () => {
    const ing = await postJson(`${h.srv.url}/ingest`, { content: "The staging deploy runs from the shop repository on every merge." });
    const { id } = (await ing.json()) as { id: string };
    const secret = "postgres://app:Sup3r-S3cret@db.staging:5432/shop";
    const res = await fetch(`${h.srv.url}/memory?id=${id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: `The staging database is ${secret}.` }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { memory: { content: string } };
    expect(body.memory.content).toBe("The staging database is postgres://app:[REDACTED:password]@db.staging:5432/shop.");
    expect(await dbBytes()).not.toContain("Sup3r-S3cret");
  });

  test("the model client redacts a prompt built by any route", async () => {
    const { createLlmClient } = await import("../../src/llm/client");
    const llm = createLlmClient({ ...h.srv.services.config.llm, baseURL: h.fake.baseURL, model: "fake" }, h.srv.services.config.paths.state)!;
    h.fake.script(memoriesReply());
    await llm.chatJson([{ role: "user", content: `machine api.example.com login bob password ${"Pw9".repeat(4)}` }]);
    expect(h.fake.receivedText()).not.toContain("Pw9Pw9Pw9Pw9");
    expect(h.fake.receivedText()).toContain("[REDACTED:netrc-password]");
  });
});
