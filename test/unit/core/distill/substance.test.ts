import { describe, expect, test } from "bun:test";
import { substanceGate, substanceReason } from "../../../../src/core/distill";

describe("substance gate", () => {
  const dropped: [string, string][] = [
    ["", "empty"],
    ["   \n ", "empty"],
    ["...", "empty"],
    ["ok", "filler"],
    ["Thanks!", "filler"],
    ["Let me check.", "filler"],
    ["Sounds good, will do.", "filler"],
    ["Okay, got it, thank you", "filler"],
    ["Fixed the bug.", "too short"],
    ["Deploy works now", "too short"],
    ['{"exit_code": 0, "stdout": "ok"}\n/usr/local/bin/node\n$ npm run build', "tool noise"],
    [
      "    at Object.<anonymous> (/app/src/index.js:10:15)\n    at Module._compile (node:internal/modules/cjs/loader:1256:14)\n    at node:internal/main/run_main_module:28:49",
      "tool noise",
    ],
    ["a3f9c2e1b7d84f6e9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3", "tool noise"],
  ];
  for (const [content, reason] of dropped) {
    test(`drops ${JSON.stringify(content.slice(0, 40))} as ${reason}`, () => {
      expect(substanceReason(content)).toBe(reason as any);
    });
  }

  const kept = [
    "The staging database listens on port 5433 behind pgbouncer.",
    "Decided to keep SQLite over Postgres for the memory service: one file, no server, WAL handles our write rate.",
    "Ok, so the fix was to set lock_timeout = 5s on migrations touching the orders table.",
    "Running `bun test --preload ./test/preload.ts` isolates MEMSVC_HOME per run; without it tests wrote to ~/.memsvc.",
    "The CI failure came from this error:\n$ npm ci\nnpm ERR! code EINTEGRITY\nThe lockfile pinned a tarball that the registry had republished; regenerating package-lock.json fixed it.",
  ];
  for (const content of kept) {
    test(`keeps ${JSON.stringify(content.slice(0, 40))}`, () => {
      expect(substanceReason(content)).toBeNull();
    });
  }

  test("gate splits kept from dropped, keeping extra fields on kept items", () => {
    const r = substanceGate([
      { content: "ok", i: 0 },
      { content: "The billing API rate limit is 500 requests per minute per tenant.", i: 1 },
    ]);
    expect(r.kept).toEqual([{ content: "The billing API rate limit is 500 requests per minute per tenant.", i: 1 }]);
    expect(r.dropped).toEqual([{ content: "ok", reason: "filler" }]);
  });
});
