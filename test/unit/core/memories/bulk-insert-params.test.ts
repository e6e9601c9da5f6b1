import { afterAll, beforeAll, expect, test } from "bun:test";
import type { NewMemoryRow } from "../../../../src/core/memories/store";
import type { ExportRow, IdentityExportRow } from "../../../../src/core/memories/store-bulk";
import { hashEmbed } from "../../../../src/embed/fallback";
import { sharedPgUrl } from "../../../helpers/pg-server";
import { makeServices, type TestServices } from "../../../helpers/services";
import { storedVector } from "../../../helpers/stored-vector";

// PostgreSQL takes at most 65,535 bind parameters in one statement: a
// multi-row INSERT of ~5,000 memories (13 columns each) is past it. The
// engine must split its bulk writes by parameter count. 6,000 rows (78,000
// parameters for the memories alone) through each bulk write path, on both
// engines in every run (PostgreSQL: PGlite over TCP), must land whole and in order.
const N = 6_000;
let lite: TestServices;
let pg: TestServices;
beforeAll(async () => {
  lite = makeServices({ config: { storage: "sqlite" }, env: { MEMSVC_STORAGE: "sqlite" } });
  const schema = () => `params_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  pg = makeServices({ config: { storage: "postgres", database_url: await sharedPgUrl(), database_schema: schema() } });
}, 120_000);
afterAll(async () => {
  await lite?.close();
  await pg?.close();
});

const T0 = Date.UTC(2025, 0, 1);
function rows(prefix: string): NewMemoryRow[] {
  return Array.from({ length: N }, (_, i) => {
    const content = `${prefix} memory ${i}: the ${["billing", "search", "deploy"][i % 3]} service keeps retry ${i % 17}`;
    return {
      id: crypto.randomUUID(),
      content,
      memoryType: "knowledge",
      project: i % 2 ? "alpha" : null,
      sourceAgent: "bulk-test",
      sourceAgentId: null,
      sourceDomain: null,
      sourceSession: null,
      privacy: "WORK",
      createdAt: T0 + i,
      updatedAt: T0 + i,
      refreshedAt: T0 + i,
      strength: 1,
      vector: hashEmbed(content),
      tags: [
        { tag: "general", weight: 1 },
        { tag: `t${i % 5}`, weight: 0.5 },
      ],
    };
  });
}

const engines = ["sqlite", "postgres"] as const;
const services = (engine: (typeof engines)[number]) => (engine === "sqlite" ? lite : pg);

test.each(engines)(
  `insertMemories on %s writes ${N} memories with vectors and tags in one call, seqs in input order`,
  async (engine) => {
    {
      const s = services(engine);
      const input = rows(s.storage.engine);
      const seqs = await s.storage.memories.insertMemories(input);
      expect(seqs).toHaveLength(N);
      expect(new Set(seqs).size).toBe(N);
      // Each seq belongs to the row at its position.
      const probe = [0, 5_041, N - 1];
      const got = await s.storage.memories.memoriesBySeq(probe.map((i) => seqs[i]));
      const bySeq = new Map(got.map((r) => [r.seq, r.id]));
      expect(probe.map((i) => bySeq.get(seqs[i]))).toEqual(probe.map((i) => input[i].id));
      expect(await s.storage.memories.countMemories()).toBe(N);
      for (const i of probe) {
        const v = await storedVector(s, seqs[i]);
        expect(v?.slice(0, 8).map((x) => Math.round(x * 1e4))).toEqual(Array.from(input[i].vector.slice(0, 8), (x) => Math.round(x * 1e4)));
      }
      expect((await s.storage.memories.tagsOf([input[N - 1].id])).map((t) => t.tag).sort()).toEqual(["general", `t${(N - 1) % 5}`]);
    }
  },
  300_000,
);

test.each(engines)(
  `importRows on %s writes ${N} memories, links and events into an empty store`,
  async (engine) => {
    const s =
      engine === "sqlite"
        ? makeServices({ config: { storage: "sqlite" }, env: { MEMSVC_STORAGE: "sqlite" } })
        : makeServices({ config: { storage: "postgres", database_url: await sharedPgUrl(), database_schema: `params_import_${process.pid}` } });
    try {
      const memories = rows("import").map((r) => ({
        id: r.id,
        content: r.content,
        memory_type: r.memoryType,
        project: r.project,
        source_agent: r.sourceAgent,
        source_agent_id: null,
        source_domain: null,
        source_session: null,
        privacy: r.privacy,
        created_at: r.createdAt,
        updated_at: r.updatedAt,
        refreshed_at: r.refreshedAt,
        strength: r.strength,
        shown_count: 0,
        used_count: 0,
        last_shown_at: null,
        last_used_at: null,
        tags: [...r.tags],
        // No vectors: PGlite would insert each into the HNSW graph one by one (minutes); insertMemories covers vectors.
        vector: null,
      }));
      const links = memories.slice(1).map((m, i) => ({ from_id: m.id, to_id: memories[i].id, relationship: "related", weight: 0.5, created_at: T0 }));
      const events = memories.map((m, i) => ({ memory_id: m.id, event: "shown", at: T0 + i }));
      {
        const out = await s.storage.memories.importRows({ memories, links, segments: [], events, history: [], anchors: [] }, "fallback:hash-v1");
        expect(out.seqs).toHaveLength(N);
        expect(out.links).toBe(N - 1);
        expect(await s.storage.memories.countMemories()).toBe(N);
        const exported: (ExportRow | IdentityExportRow)[] = [];
        await s.storage.memories.exportRows({ vectors: false }, async (r) => void exported.push(r));
        expect(exported.filter((r) => r.kind === "memory")).toHaveLength(N);
        expect(exported.filter((r) => r.kind === "link")).toHaveLength(N - 1);
        expect(exported.filter((r) => r.kind === "event")).toHaveLength(N);
      }
    } finally {
      await s.close();
    }
  },
  300_000,
);
