/**
 * Synthetic engineering notes and queries for load benchmarks. Words are
 * drawn with a skewed (Zipf-like) distribution from lists of projects,
 * services, technologies, errors and numbers, so FTS sees what a real store
 * holds: a few very common terms, a long tail of rare ones, and services that
 * belong to projects (a project-filtered query finds its own notes).
 */

/** Deterministic PRNG (mulberry32): the same seed gives the same corpus on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const list = (s: string) => s.trim().split(/\s+/);

const PROJECTS = list(`atlas billing checkout helios inventory ledger mercury nebula orion payments
  quasar search-ui telemetry vega warehouse zephyr mobile-app data-platform infra docs`);
const SERVICE_STEMS = list(`auth billing cart catalog checkout config gateway geo identity images index
  invoice ledger mailer media metrics notify orders payments pricing profile quota ranker
  reports scheduler search session shipping storage sync tax tokens uploads users wallet webhooks`);
const SERVICE_KINDS = list(`api service worker gateway proxy cron consumer exporter`);
const TECH = list(`postgres redis kafka rabbitmq nginx envoy kubernetes helm terraform docker grpc graphql
  elasticsearch clickhouse sqlite s3 cloudfront lambda bun node deno rust go python react vite
  webpack esbuild vitest jest playwright prometheus grafana loki sentry opentelemetry vault
  consul etcd argo github-actions jenkins pnpm yarn turbo nx prisma drizzle typeorm zod`);
const COMPONENTS = list(`connection-pool retry-loop cache-layer rate-limiter circuit-breaker migration
  schema index query-planner serializer websocket healthcheck readiness-probe liveness-probe
  cron-job batch-job queue dead-letter-queue feature-flag config-loader logger tracer
  auth-middleware session-store token-refresh upload-handler image-resizer search-index
  build-cache test-runner lint-step release-script dockerfile entrypoint ingress load-balancer`);
const ERRORS = list(`timeout deadlock oom-kill segfault 502 503 504 429 econnreset econnrefused
  race-condition memory-leak n+1-queries stale-cache split-brain clock-skew flaky-test
  null-pointer off-by-one encoding-bug utf8-mojibake tls-handshake-failure dns-lookup-failure
  disk-full inode-exhaustion slow-query lock-contention duplicate-delivery lost-update`);
const ENVS = list(`production staging dev preview canary ci local`);
const VERBS = list(`fixed traced reproduced bisected mitigated rolled-back patched profiled migrated
  refactored replaced upgraded pinned documented benchmarked reverted split merged tuned`);
const METRICS = list(`p50 p95 p99 latency throughput error-rate cpu memory rss heap gc-pauses
  cold-start build-time test-time bundle-size queue-depth replication-lag cache-hit-rate`);
const REASONS = list(`simpler-operations lower-latency fewer-dependencies better-typing cheaper-hosting
  team-familiarity stronger-consistency smaller-bundle faster-builds clearer-ownership
  vendor-lock-in licence-terms security-review compliance-audit on-call-load`);
const PEOPLE = list(`alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil trent victor wendy`);
const RARE = list(`idempotency backpressure jitter hedging sharding rebalancing tombstones compaction
  vacuum checkpoint fsync mmap epoll io_uring seccomp cgroups namespaces sidecar mTLS oauth pkce
  jwks saml scim webauthn csp cors hsts brotli zstd protobuf avro parquet arrow wasm simd`);

/** Index skewed towards the front of a list: the first entries become the common terms. */
function zipf(r: () => number, n: number, skew = 1.7): number {
  return Math.min(n - 1, Math.floor(n * r() ** skew));
}

export interface Note {
  content: string;
  project: string;
  memoryType: "knowledge" | "experience" | "decisions" | "learnings";
}

export interface Query {
  query: string;
  project: string | null;
}

export class NoteGenerator {
  private readonly r: () => number;
  private readonly servicesOf: Map<string, string[]>;

  constructor(seed = 42) {
    this.r = prng(seed);
    this.servicesOf = new Map();
    const all = SERVICE_STEMS.flatMap((stem, i) => [
      `${stem}-${SERVICE_KINDS[i % SERVICE_KINDS.length]}`,
      `${stem}-${SERVICE_KINDS[(i * 3 + 1) % SERVICE_KINDS.length]}`,
    ]);
    const owner = prng(seed ^ 0x5eed);
    for (const p of PROJECTS) {
      const own = new Set<string>();
      while (own.size < 8) own.add(all[Math.floor(owner() * all.length)]);
      this.servicesOf.set(p, [...own]);
    }
  }

  private pick<T>(items: readonly T[], skew = 1.7): T {
    return items[zipf(this.r, items.length, skew)];
  }
  private int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  private w(items: readonly string[], skew?: number): string {
    return this.pick(items, skew).replace(/-/g, " ");
  }

  project(): string {
    return this.pick(PROJECTS, 1.4);
  }

  private sentence(project: string): string {
    const svc = this.pick(this.servicesOf.get(project)!, 1.2);
    const t = (): string => this.w(TECH);
    const n = () => this.int(2, 950);
    switch (this.int(0, 13)) {
      case 0:
        return `Deployed ${svc} ${this.int(1, 9)}.${this.int(0, 30)}.${this.int(0, 9)} to ${this.w(ENVS)}; ${this.w(METRICS)} went from ${n()} ms to ${n()} ms.`;
      case 1:
        return `The ${this.w(COMPONENTS)} in ${svc} fails with ${this.w(ERRORS)} when ${this.w(TECH)} is under load; ${this.w(VERBS)} by raising the limit to ${n()}.`;
      case 2:
        return `Decision: use ${t()} instead of ${t()} for the ${this.w(COMPONENTS)} of ${svc}, because of ${this.w(REASONS)}.`;
      case 3:
        return `${this.w(PEOPLE)} ${this.w(VERBS)} the ${this.w(ERRORS)} in ${svc}: the ${this.w(COMPONENTS)} ignored ${this.w(RARE, 1)} on ${this.w(ENVS)}.`;
      case 4:
        return `${svc} listens on port ${this.int(3000, 9999)} in ${this.w(ENVS)} and talks to ${t()} through the ${this.w(COMPONENTS)}.`;
      case 5:
        return `Never run the ${this.w(COMPONENTS)} of ${svc} without ${this.w(RARE, 1)}; it caused a ${this.w(ERRORS)} incident on ${this.w(ENVS)} (${n()} failed requests).`;
      case 6:
        return `Upgrading ${t()} from ${this.int(1, 20)}.${this.int(0, 9)} to ${this.int(1, 20)}.${this.int(0, 9)} broke the ${this.w(COMPONENTS)}; pinned the old version in ${svc} until the ${this.w(ERRORS)} is fixed.`;
      case 7:
        return `${this.w(METRICS)} of ${svc} on ${this.w(ENVS)} is ${n()} ${this.pick(["ms", "MB", "req/s", "%"])} after ${this.w(VERBS)} the ${this.w(COMPONENTS)}.`;
      case 8:
        return `Tests for ${svc} use ${t()} with a real ${t()}; the ${this.w(ERRORS)} in CI came from ${this.w(RARE, 1)} in the ${this.w(COMPONENTS)}.`;
      case 9:
        return `${this.w(PEOPLE)} prefers small pull requests for ${project} and reviews ${this.w(COMPONENTS)} changes within ${this.int(1, 48)} hours.`;
      case 10:
        return `Runbook: when ${svc} reports ${this.w(ERRORS)}, check ${this.w(METRICS)} in ${this.w(TECH)}, then restart the ${this.w(COMPONENTS)}.`;
      case 11:
        return `The ${project} release train ships every ${this.pick(["monday", "tuesday", "thursday", "friday"])}; ${svc} needs a ${this.w(RARE, 1)} review before.`;
      case 12:
        return `Learned: ${this.w(RARE, 1)} in the ${this.w(COMPONENTS)} avoids ${this.w(ERRORS)} with ${t()}; measured ${n()} fewer errors per day.`;
      default:
        return `${svc} stores ${this.w(RARE, 1)} data in ${t()} (table ${this.w(SERVICE_STEMS)}_${this.w(COMPONENTS).split(" ")[0]}, ${this.int(1, 900)}k rows).`;
    }
  }

  note(): Note {
    const project = this.project();
    const sentences = Array.from({ length: this.int(1, 3) }, () => this.sentence(project));
    const memoryType = this.pick(["experience", "knowledge", "decisions", "learnings"] as const, 1.2);
    return { content: sentences.join(" "), project, memoryType };
  }

  /** A question an agent would ask; about a third carry a project filter. */
  query(): Query {
    const project = this.project();
    const svc = this.pick(this.servicesOf.get(project)!, 1.2);
    const q = [
      () => `how did we fix the ${this.w(ERRORS)} in ${svc}`,
      () => `why did we choose ${this.w(TECH)} for ${this.w(COMPONENTS)}`,
      () => `what port does ${svc} use in ${this.w(ENVS)}`,
      () => `${svc} ${this.w(METRICS)} regression after deploy`,
      () => `${this.w(COMPONENTS)} ${this.w(ERRORS)} ${this.w(TECH)}`,
      () => `upgrade ${this.w(TECH)} broke ${this.w(COMPONENTS)}`,
      () => `runbook for ${this.w(ERRORS)} on ${this.w(ENVS)}`,
      () => `${this.w(RARE, 1)} in ${svc}`,
      () => `who reviews ${this.w(COMPONENTS)} changes in ${project}`,
      () => `tests ${this.w(TECH)} flaky ${this.w(ERRORS)} ci`,
    ][this.int(0, 9)]();
    return { query: q, project: this.r() < 0.33 ? project : null };
  }

  /**
   * A prompt as a user types it to an agent (5-20 words, conversational, not a memory's
   * phrasing): the short queries recall embeds (issue 38).
   */
  prompt(): Query {
    const project = this.project();
    const svc = this.pick(this.servicesOf.get(project)!, 1.2);
    const lead = this.pick(["", "hey, ", "ok so ", "quick one: ", "please ", "can you "], 1.2);
    const body = [
      () => `look into why ${svc} keeps throwing ${this.w(ERRORS)} on ${this.w(ENVS)}`,
      () => `the ${this.w(COMPONENTS)} is slow again, any idea what we changed`,
      () => `add a test for the ${this.w(COMPONENTS)} in ${svc} before we ship`,
      () => `what did we decide about ${this.w(TECH)} last time`,
      () => `${this.w(METRICS)} looks bad after the deploy, roll back ${svc}?`,
      () => `write a migration for ${svc} that keeps ${this.w(RARE, 1)} working`,
      () => `bump ${this.w(TECH)} and make sure nothing breaks in ${this.w(COMPONENTS)}`,
      () => `fix the flaky ci job, it fails with ${this.w(ERRORS)} sometimes`,
      () => `explain how ${svc} talks to ${this.w(TECH)}`,
      () => `refactor the ${this.w(COMPONENTS)} so ${this.w(PEOPLE)} can review it today`,
    ][this.int(0, 9)]();
    return { query: `${lead}${body}`, project: this.r() < 0.33 ? project : null };
  }

  /** A long query shaped like a memory (2-4 sentences of a new note): ingest's link search, "find notes like this". */
  longQuery(): Query {
    const project = this.project();
    const text = Array.from({ length: this.int(2, 4) }, () => this.sentence(project)).join(" ");
    return { query: text, project: this.r() < 0.33 ? project : null };
  }

  /** A single identifier: a service, a table, an error code or a config key, as pasted alone. */
  identifier(): Query {
    const project = this.project();
    const svc = this.pick(this.servicesOf.get(project)!, 1.2);
    const q = [
      () => svc,
      () => `${this.w(SERVICE_STEMS)}_${this.w(COMPONENTS).split(" ")[0]}`,
      () => this.w(ERRORS).replace(/ /g, "-"),
      () => `${svc.split("-")[0]}.${this.w(RARE, 1).replace(/ /g, "_")}`,
    ][this.int(0, 3)]();
    return { query: q, project: this.r() < 0.33 ? project : null };
  }

  /** Creation time spread over the last `days`, newer notes more frequent. */
  createdAt(now: number, days = 365): number {
    return now - Math.floor(days * 86_400_000 * this.r() ** 2);
  }

  random(): number {
    return this.r();
  }
}
