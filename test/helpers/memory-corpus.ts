import { writeFileSync } from "node:fs";
import { hashEmbed } from "../../src/embed/fallback";
import { FORMAT } from "../../src/core/memories/portability";

/**
 * A realistic store as an export file (memsvc-export/1): memories written
 * the way agents write them (decisions, facts, lessons, episodes about
 * services, files and people), with tags, links, earlier versions, anchors,
 * adoption events, segments and fallback-embedder vectors. `memsvc import`
 * loads it in one transaction: much faster than ingesting one by one, and
 * the rows are what ingest would have stored.
 */
const PROJECTS = ["checkout", "billing", "search-api", "mobile-app", "infra", null];
const SERVICES = [
  "payments gateway",
  "order service",
  "auth proxy",
  "nightly exporter",
  "search indexer",
  "notification worker",
  "feature flag store",
  "rate limiter",
];
const FILES = [
  "src/api/orders.ts",
  "src/db/migrations/0042.sql",
  "deploy/helm/values.yaml",
  "src/auth/session.ts",
  "scripts/backfill.py",
  "src/search/ranker.go",
];
const PEOPLE = ["Priya", "Marco", "Lena", "Tomás", "Aiko", "Jon"];
const TAGS = ["backend", "database", "deploy", "security", "frontend", "performance", "testing", "ops"];
const TEMPLATES = [
  (r: Rng) =>
    `Decided to move the ${r.pick(SERVICES)} behind the ${r.pick(SERVICES)} because p99 latency went from ${r.int(80, 400)} ms to ${r.int(400, 2000)} ms under load; ${r.pick(PEOPLE)} agreed in the design review.`,
  (r: Rng) => `The ${r.pick(SERVICES)} reads its config from ${r.pick(FILES)}; changing the retry budget there needs a restart of all ${r.int(2, 12)} pods.`,
  (r: Rng) =>
    `Lesson: running ${r.pick(FILES)} against production without --dry-run locked the orders table for ${r.int(2, 40)} minutes. Always take a snapshot first.`,
  (r: Rng) => `${r.pick(PEOPLE)} prefers small pull requests (under ${r.int(200, 600)} lines) and wants the migration and the code change in separate commits.`,
  (r: Rng) =>
    `Debugged flaky test in ${r.pick(FILES)}: the ${r.pick(SERVICES)} mock returned events out of order when the clock skew exceeded ${r.int(5, 500)} ms. Fixed by sorting by sequence number.`,
  (r: Rng) =>
    `The staging database is on PostgreSQL ${r.int(13, 17)} with pgvector; connection pool size ${r.int(5, 50)}; ${r.pick(PEOPLE)} owns the credentials rotation.`,
  (r: Rng) =>
    `Incident ${r.int(100, 999)}: the ${r.pick(SERVICES)} ran out of file descriptors after a deploy; root cause was an unclosed HTTP client in ${r.pick(FILES)}.\nFollow-up: add a lint rule and an alert at ${r.int(60, 90)}% of the limit.`,
  (r: Rng) =>
    `API convention: error responses carry a machine-readable code and a message; the ${r.pick(SERVICES)} still returns bare strings for ${r.int(2, 9)} endpoints — fix before v${r.int(2, 5)}.`,
];

class Rng {
  constructor(private state: number) {}
  next(): number {
    // mulberry32: deterministic, so a failing run can be reproduced.
    let t = (this.state += 0x6d2b79f5);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
}

const uuid = (r: Rng) => {
  const hex = Array.from({ length: 32 }, () => r.int(0, 15).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

export interface CorpusCounts {
  memories: number;
  links: number;
  history: number;
  anchors: number;
}

/** Writes an export of `n` memories to `file` (with vectors from the fallback embedder). */
export function writeCorpus(file: string, n: number, seed = 17): CorpusCounts {
  const r = new Rng(seed);
  const lines: string[] = [
    JSON.stringify({ kind: "meta", format: FORMAT, version: "test", embedder: "fallback:hash-v1", exported_at: new Date(0).toISOString(), vectors: true }),
  ];
  const ids: string[] = [];
  const base = Date.UTC(2025, 0, 1);
  const counts: CorpusCounts = { memories: n, links: 0, history: 0, anchors: 0 };
  const rest: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = uuid(r);
    ids.push(id);
    const content = `${r.pick(TEMPLATES)(r)} (#${i})`;
    const created = base + i * 3_600_000 + r.int(0, 3_599_999);
    const shown = r.int(0, 3) === 0 ? 0 : r.int(1, 40);
    const used = shown ? r.int(0, shown) : 0;
    const tags = Array.from(new Set([r.pick(TAGS), r.pick(TAGS)])).map((tag, k) => ({ tag, weight: k === 0 ? 1 : Math.round(r.next() * 1000) / 1000 }));
    const memory = {
      kind: "memory",
      id,
      content,
      memory_type: r.pick(["knowledge", "experience", "decisions", "learnings"]),
      project: r.pick(PROJECTS),
      source_agent: r.pick(["claude-code", "codex", "cursor"]),
      source_agent_id: r.int(0, 1) ? `agent-${r.int(1, 5)}` : null,
      source_domain: r.int(0, 1) ? r.pick(TAGS) : null,
      source_session: `session-${Math.floor(i / 7)}`,
      privacy: "WORK",
      created_at: created,
      updated_at: created + r.int(0, 86_400_000),
      refreshed_at: created + r.int(0, 30 * 86_400_000),
      strength: Math.round((0.3 + r.next() * 1.7) * 1e6) / 1e6,
      shown_count: shown,
      used_count: used,
      last_shown_at: shown ? created + r.int(1, 86_400_000) : null,
      last_used_at: used ? created + r.int(1, 86_400_000) : null,
      // The member that created it (team servers); not drawn from the generator, so the rest of the corpus stays as it was.
      created_by: i % 3 === 0 ? `member-${i % 5}` : null,
      tags,
      vector: Buffer.from(hashEmbed(content).buffer).toString("base64"),
    };
    lines.push(JSON.stringify(memory));
    if (i > 0 && r.int(0, 2) === 0) {
      rest.push(
        JSON.stringify({
          kind: "link",
          from_id: id,
          to_id: ids[r.int(0, i - 1)],
          relationship: r.pick(["related_to", "depends_on", "supersedes", "contradicts"]),
          weight: Math.round(r.next() * 1000) / 1000,
          created_at: created,
        }),
      );
      counts.links++;
    }
    if (r.int(0, 9) === 0) {
      for (let v = 1; v <= r.int(1, 3); v++) {
        rest.push(
          JSON.stringify({
            kind: "history",
            memory_id: id,
            version: v,
            content: `${content} (before edit ${v})`,
            memory_type: memory.memory_type,
            project: memory.project,
            reason: r.pick(["update", "distill", "restore"]),
            source_id: null,
            replaced_at: created + v * 1000,
          }),
        );
        counts.history++;
      }
    }
    if (r.int(0, 14) === 0) {
      const stale = r.int(0, 1) ? JSON.stringify({ reason: "changed", changed_paths: [r.pick(FILES)], commits: r.int(1, 9) }) : null;
      rest.push(
        JSON.stringify({
          kind: "anchor",
          memory_id: id,
          repo: `github.com/acme/${memory.project ?? "misc"}`,
          branch: "main",
          commit_id: uuid(r).replace(/-/g, "").slice(0, 40).padEnd(40, "0"),
          paths: JSON.stringify([r.pick(FILES)]),
          anchored_at: created,
          stale,
          stale_at: stale ? created + 5000 : null,
          ...recheckState(content, created, stale),
        }),
      );
      counts.anchors++;
    }
    if (shown) rest.push(JSON.stringify({ kind: "event", memory_id: id, event: "shown", at: created + 10 }));
    if (used) rest.push(JSON.stringify({ kind: "event", memory_id: id, event: "used", at: created + 20 }));
    if (i % 7 === 6)
      rest.push(
        JSON.stringify({
          kind: "segment",
          key: `session-${Math.floor(i / 7)}#0`,
          session_id: `session-${Math.floor(i / 7)}`,
          memory_count: 7,
          created_at: created,
        }),
      );
  }
  writeFileSync(file, `${[...lines, ...rest].join("\n")}\n`, { mode: 0o600 });
  return counts;
}

/** The nightly re-check's columns of an anchor, derived without drawing from the generator (the rest of the corpus stays as it was). */
function recheckState(content: string, created: number, stale: string | null) {
  return {
    evidence: stale || created % 2 === 0 ? `assistant: ${content.slice(0, 120)}` : null,
    rechecked: stale && created % 3 === 0 ? JSON.stringify(["changed", [], [], 1, null]) : null,
    confirmed_at: !stale && created % 3 === 1 ? created + 7000 : null,
  };
}
