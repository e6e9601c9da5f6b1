import { describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cuesOf, readInjections, recordInjection, terms, usedMemories } from "../../../src/capture/use";

const PG = {
  id: "3f2a9c1b-0000-4000-8000-000000000001",
  content: "The staging Postgres database listens on port 5433 behind pgbouncer (config in infra/pgbouncer.ini).",
};
const DEPLOY = {
  id: "7c1d0e2f-0000-4000-8000-000000000002",
  content: "Production deploys run through the GitHub Actions workflow deploy.yml with a manual approval.",
};
const PROMPT = new Set(terms("how do I connect to the staging postgres database?"));

describe("use detection", () => {
  test("cues are the memory's distinctive terms less the prompt's own words", () => {
    const { strong, words } = cuesOf(PG.content, PROMPT);
    expect([...strong].sort()).toEqual(["5433", "infra/pgbouncer.ini"]);
    expect(words.has("pgbouncer")).toBe(true);
    // The prompt said these: the agent repeating them proves nothing.
    expect(words.has("staging")).toBe(false);
    expect(words.has("postgres")).toBe(false);
  });

  test("a memory whose port and pooler come back in the agent's turns is used; one it ignored is not", () => {
    const written = "I'll connect through pgbouncer.\npsql -h staging-db -p 5433 -U app";
    expect(usedMemories(written, [PG, DEPLOY], PROMPT)).toEqual([PG.id]);
  });

  test("echoing only the prompt's words, or one weak word, is not use", () => {
    expect(usedMemories("Connecting to the staging postgres database now.", [PG], PROMPT)).toEqual([]);
    expect(usedMemories("The approval step matters.", [DEPLOY], new Set())).toEqual([]);
  });

  test("citing the short id is use; a file path in a tool call counts", () => {
    expect(usedMemories("As (memory 7c1d0e2f, 2026-03-02, from laptop) says, approve it.", [DEPLOY], new Set())).toEqual([DEPLOY.id]);
    expect(usedMemories("Read .github/workflows/deploy.yml\nthe workflow needs an approval", [DEPLOY], new Set())).toEqual([DEPLOY.id]);
  });

  test("the hook's record is private and read back per session", () => {
    const home = mkdtempSync(join(tmpdir(), "memsvc-use-"));
    recordInjection(home, "sess-1", [PG.id, DEPLOY.id], "how do I connect to the staging postgres database?", 1000);
    recordInjection(home, "sess-2", [PG.id], "other", 2000);
    const got = readInjections(home, "sess-1");
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ session_id: "sess-1", at: 1000, ids: [PG.id, DEPLOY.id] });
    expect(got[0].prompt_terms).toContain("postgres");
    expect(statSync(join(home, "state", "injected")).mode & 0o777).toBe(0o700);
    for (const f of require("node:fs").readdirSync(join(home, "state", "injected")))
      expect(statSync(join(home, "state", "injected", f)).mode & 0o777).toBe(0o600);
  });
});
