import { beforeEach, describe, expect, test } from "bun:test";
import { memoriesReply } from "../helpers/fake-llm";
import { DISTILL_TIMEOUT_MS, distillHarness } from "../helpers/distill-server";

const h = distillHarness();
beforeEach(() => void (h.srv.services.logs.length = 0));

// Words only the transcript holds (and a secret-shaped value): none may reach the log.
const TRANSCRIPT =
  "user: the zanzibar-cutover runbook says to drain queue quokka-7 first; the key is AKIAIOSFODNN7EXAMPLE\n\nassistant: drained quokka-7, then ran the zanzibar cutover.";
const warnings = () => h.srv.services.logs.filter((l) => l.level === "warn" && l.message.startsWith("distill failed"));

describe("/distill failures are logged by the server: one warn line, session and reason, no transcript text", () => {
  const cases: [string, () => void, RegExp][] = [
    ["the model answers HTTP 500", () => h.fake.script({ status: 500, message: "model crashed" }), /answered HTTP 500/],
    // A model that echoes the transcript back as prose: the reply's head is not logged.
    ["the model answers something that is not JSON", () => h.fake.script({ text: `Sure! Summary: ${TRANSCRIPT}` }), /answered something that is not JSON$/],
    ["the model answers JSON without a memories list", () => h.fake.script({ json: { notes: ["quokka-7 drained"] } }), /without a "memories" list/],
    ["the model does not answer in time", () => h.fake.script({ hang: true }), /did not answer within/],
  ];
  for (const [name, arrange, reason] of cases) {
    test(
      name,
      async () => {
        arrange();
        const r = await h.post({ text: TRANSCRIPT, session_id: "sess-log-1", segment_id: "0-812-abc" });
        expect(r.status).toBe(503);
        const lines = warnings();
        expect(lines).toHaveLength(1);
        const line = lines[0].message;
        expect(line).toStartWith('distill failed (session "sess-log-1", segment "0-812-abc"): ');
        expect(line).toMatch(reason);
        expect(line).not.toContain("\n");
        for (const word of ["zanzibar", "quokka", "AKIAIOSFODNN7EXAMPLE", "runbook"]) expect(line).not.toContain(word);
      },
      DISTILL_TIMEOUT_MS * 4,
    );
  }

  test("a distill that succeeds logs no failure; a request the client got wrong (400) is not a server failure", async () => {
    h.fake.script(memoriesReply("The zanzibar cutover drains queue quokka-7 first."));
    expect((await h.post({ text: TRANSCRIPT, session_id: "sess-log-2" })).status).toBe(201);
    expect((await h.post({ session_id: "sess-log-2" })).status).toBe(400);
    expect(warnings()).toHaveLength(0);
  });
});
