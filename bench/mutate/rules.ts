/**
 * Critical rules of the spec and docs/, each with one-line bugs the listed
 * test files must catch. `find` must occur exactly once in `file`; when the
 * source changes so that it no longer does, the harness reports an error
 * (never a kill) and the snippet here needs updating.
 *
 * Mutants stay out of src/store/sqlite/vector/ and recent.ts (speed work in
 * flight there) and name only the test files that cover the rule, so a run
 * takes minutes.
 */
export interface Mutant {
  id: string;
  /** Path from the repo root. */
  file: string;
  /** The exact original text (one line or part of one). */
  find: string;
  replace: string;
  /** Test files (from the repo root) of which at least one must fail. */
  tests: string[];
}

export interface Rule {
  rule: string;
  mutants: Mutant[];
}

const AUTH = ["test/http/auth.test.ts", "test/http/security.test.ts"];
const LIMITS = ["test/http/limits.test.ts"];
const DISTILL = ["test/http/distill.test.ts"];
const RECALL = ["test/unit/core/recall/recall.test.ts"];
const NIGHTLY = ["test/unit/core/nightly/nightly.test.ts"];
const GRAPH = ["test/http/graph.test.ts", "test/unit/core/graph/graph.test.ts"];
const IDENTITY = ["test/unit/core/identity/identity.test.ts", "test/http/identity.test.ts"];
const IDENTITY_WRITE = ["test/unit/core/identity/identity-write.test.ts"];
const REDACT = ["test/unit/core/secrets/redact.test.ts", "test/http/distill-secrets.test.ts"];
// What /distill redacts (roles, the model's fragments) is checked through the route.
const DISTILL_REDACT = ["test/http/distill-secrets.test.ts", "test/http/distill-content.test.ts"];
const SEARCH = ["test/unit/core/search/search.test.ts"];
const MEMORIES = ["test/http/memories.test.ts"];

export const RULES: Rule[] = [
  // --- auth (spec: bearer token; docs/security.md: localhost bypass) ---
  {
    rule: "a request without the token from a remote peer is 401",
    mutants: [
      {
        id: "auth-bypass-any-peer",
        file: "src/http/bypass.ts",
        find: 'if (!config.auth.localhostBypass || !isLoopbackPeer(peer)) return "off";',
        replace: 'if (!config.auth.localhostBypass) return "off";',
        tests: AUTH,
      },
    ],
  },
  {
    rule: "auth.localhostBypass off: loopback callers need the token too",
    mutants: [
      {
        id: "bypass-ignores-config",
        file: "src/http/bypass.ts",
        find: 'if (!config.auth.localhostBypass || !isLoopbackPeer(peer)) return "off";',
        replace: 'if (!isLoopbackPeer(peer)) return "off";',
        tests: ["test/http/bypass.test.ts"],
      },
      {
        id: "bypass-default-postgres",
        file: "src/config.ts",
        find: 'localhostBypass: storage === "sqlite" && isLoopbackBind(host)',
        replace: "localhostBypass: isLoopbackBind(host)",
        tests: ["test/http/bypass.test.ts"],
      },
      {
        id: "bypass-default-any-bind",
        file: "src/config.ts",
        find: 'localhostBypass: storage === "sqlite" && isLoopbackBind(host)',
        replace: 'localhostBypass: storage === "sqlite"',
        tests: ["test/http/bypass.test.ts"],
      },
    ],
  },
  {
    rule: "the localhost bypass covers exactly 127.0.0.1, ::1 and ::ffff:127.0.0.1",
    mutants: [
      {
        id: "loopback-any-127",
        file: "src/http/auth.ts",
        find: 'return address === "127.0.0.1" || address === "::1"',
        replace: 'return !!address?.startsWith("127.") || address === "::1"',
        tests: [...AUTH, "test/unit/config.test.ts"],
      },
      {
        id: "loopback-drop-v6",
        file: "src/http/auth.ts",
        find: 'return address === "127.0.0.1" || address === "::1" || ',
        replace: 'return address === "127.0.0.1" || ',
        tests: [...AUTH, "test/unit/config.test.ts"],
      },
    ],
  },
  {
    rule: "a wrong bearer token is 401 even from loopback",
    mutants: [
      {
        id: "auth-any-token",
        file: "src/http/app.ts",
        find: "if (tokenMatches(presented, s.config.token)) {",
        replace: "if (presented !== null) {",
        tests: AUTH,
      },
    ],
  },
  {
    rule: "token comparison is case-sensitive",
    mutants: [
      {
        id: "token-case-insensitive",
        file: "src/http/auth.ts",
        find: 'const a = createHash("sha256").update(presented).digest();',
        replace: 'const a = createHash("sha256").update(presented.toLowerCase()).digest(); expected = expected.toLowerCase();',
        tests: AUTH,
      },
    ],
  },
  {
    rule: "token comparison is constant-time over equal-length digests (no prefix match)",
    mutants: [
      {
        id: "token-prefix",
        file: "src/http/auth.ts",
        find: "return timingSafeEqual(a, b);",
        replace: "return timingSafeEqual(a, b) || expected.startsWith(presented);",
        tests: AUTH,
      },
    ],
  },
  {
    rule: "the bypass refuses a cross-site Origin and a non-loopback Host (DNS rebinding)",
    mutants: [
      {
        id: "guard-origin",
        file: "src/http/auth.ts",
        find: "if (!isLoopbackHost(host)) return `cross-site",
        replace: "if (false) return `cross-site",
        tests: AUTH,
      },
      { id: "guard-host", file: "src/http/auth.ts", find: "if (host && !isLoopbackHost(host)) return", replace: "if (false) return", tests: AUTH },
    ],
  },
  // --- body limit (spec: 25 MB on /distill; docs/api.md, Limits: every route) ---
  {
    rule: "the body limit is 25 MB = 26214400 bytes",
    mutants: [
      {
        id: "body-limit-24.5",
        file: "src/http/limits.ts",
        find: "export const MAX_BODY_BYTES = 25 * 1024 * 1024;",
        replace: "export const MAX_BODY_BYTES = 24.5 * 1024 * 1024;",
        tests: LIMITS,
      },
      {
        id: "body-limit-26",
        file: "src/http/limits.ts",
        find: "export const MAX_BODY_BYTES = 25 * 1024 * 1024;",
        replace: "export const MAX_BODY_BYTES = 26 * 1024 * 1024;",
        tests: LIMITS,
      },
    ],
  },
  {
    rule: "a declared Content-Length of exactly the limit passes, one byte more is 413",
    mutants: [
      {
        id: "declared-off-by-one",
        file: "src/http/app.ts",
        find: "if (length > MAX_BODY_BYTES) return",
        replace: "if (length >= MAX_BODY_BYTES) return",
        tests: LIMITS,
      },
    ],
  },
  {
    rule: "a streamed body of exactly the limit passes, one byte more is 413",
    mutants: [{ id: "streamed-off-by-one", file: "src/http/limits.ts", find: "if (total > limit) {", replace: "if (total >= limit) {", tests: LIMITS }],
  },
  {
    rule: "the 413 message names the limit in bytes and MB",
    mutants: [
      {
        id: "413-label",
        file: "src/http/limits.ts",
        find: "const LABEL = `${MAX_BODY_BYTES / (1024 * 1024)} MB`;",
        replace: "const LABEL = `24 MB`;",
        tests: LIMITS,
      },
    ],
  },
  // --- names ---
  {
    rule: "section and agent names are at most 64 characters",
    mutants: [
      { id: "name-max-65", file: "src/core/identity/files.ts", find: "export const NAME_MAX = 64;", replace: "export const NAME_MAX = 65;", tests: IDENTITY },
      { id: "name-max-63", file: "src/core/identity/files.ts", find: "export const NAME_MAX = 64;", replace: "export const NAME_MAX = 63;", tests: IDENTITY },
    ],
  },
  {
    rule: "names match ^[a-z0-9][a-z0-9_-]*$",
    mutants: [
      {
        id: "name-pattern-dot",
        file: "src/core/identity/files.ts",
        find: "export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;",
        replace: "export const NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]*$/;",
        tests: IDENTITY,
      },
      {
        id: "name-pattern-upper",
        file: "src/core/identity/files.ts",
        find: "export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;",
        replace: "export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]*$/i;",
        tests: IDENTITY,
      },
    ],
  },
  // --- dedup ---
  {
    rule: "the segment dedup key is <session_id>#<segment_id>",
    mutants: [
      {
        id: "segment-key-no-session",
        file: "src/core/distill/distill.ts",
        find: "segmentKey: segmentId ? `${sessionId}#${segmentId}` : null,",
        replace: "segmentKey: segmentId ? `${segmentId}` : null,",
        tests: DISTILL,
      },
    ],
  },
  {
    rule: "without segment_id, any memory of the session makes /distill skip",
    mutants: [{ id: "distill-session-dedup", file: "src/core/distill/distill.ts", find: "return n > 0 ? n : null;", replace: "return null;", tests: DISTILL }],
  },
  {
    rule: "the dedup is checked again inside the write transaction",
    // The segment key is claimed by its unique constraint inside the transaction (several servers);
    // the in-transaction recheck of session-only requests has no cross-server test yet (issue 17 note).
    mutants: [
      {
        id: "distill-dedup-in-txn",
        file: "src/core/distill/distill.ts",
        find: "if (!(await tx.distill.claimSegment(req.segmentKey, req.sessionId!, s.now()))) {",
        replace: "if (!(await tx.distill.claimSegment(req.segmentKey, req.sessionId!, s.now())) && false) {",
        tests: [...DISTILL, "test/http/distill-servers.test.ts"],
      },
    ],
  },
  {
    rule: "/ingest with a session already holding memories is skipped",
    // The early check (before the embedding) only saves work: the one in the write transaction is the rule.
    mutants: [
      {
        id: "ingest-session-dedup",
        file: "src/core/memories/memories.ts",
        find: "if (again > 0) return { skipped: again };",
        replace: "",
        tests: ["test/unit/core/memories/memories.test.ts", ...MEMORIES],
      },
    ],
  },
  // --- recall ---
  {
    rule: "a memory shown by recall is suppressed for about 30 turns of its session",
    mutants: [
      {
        id: "suppress-3",
        file: "src/core/recall/tuning.ts",
        find: "export const RECALL_SUPPRESS_TURNS = 30;",
        replace: "export const RECALL_SUPPRESS_TURNS = 3;",
        tests: RECALL,
      },
      // The claim in finishTurn also holds the window, so the storage test sees this one.
      {
        id: "suppress-window-query",
        file: "src/store/sqlite/recall.ts",
        find: "AND turn > t.turn - ?2) AS suppressed",
        replace: "AND turn > t.turn - 1) AS suppressed",
        tests: [...RECALL, "test/unit/core/recall/recall-sessions.test.ts"],
      },
    ],
  },
  {
    rule: "suppression is per session",
    mutants: [
      {
        id: "suppress-cross-session",
        file: "src/store/sqlite/recall.ts",
        find: "(SELECT json_group_array(memory_id) FROM recall_shown WHERE session_id = ?1 AND",
        replace: "(SELECT json_group_array(memory_id) FROM recall_shown WHERE (session_id = ?1 OR 1) AND",
        tests: RECALL,
      },
    ],
  },
  {
    rule: "recall gate: prompts shorter than 12 characters or with fewer than 2 keywords are skipped",
    mutants: [
      {
        id: "gate-min-chars",
        file: "src/core/recall/tuning.ts",
        find: "export const RECALL_MIN_PROMPT_CHARS = 12;",
        replace: "export const RECALL_MIN_PROMPT_CHARS = 4;",
        tests: RECALL,
      },
      {
        id: "gate-min-keywords",
        file: "src/core/recall/tuning.ts",
        find: "export const RECALL_MIN_KEYWORDS = 2;",
        replace: "export const RECALL_MIN_KEYWORDS = 1;",
        tests: RECALL,
      },
    ],
  },
  {
    rule: "a skipped short prompt still counts as a turn of the session",
    mutants: [
      {
        id: "short-prompt-turn",
        file: "src/core/recall/recall.ts",
        find: "await s.storage.recall.nextTurn(sessionId, s.now(), sessionExpiry(s));",
        replace: "",
        tests: RECALL,
      },
    ],
  },
  {
    rule: "two prompts of one session at once never list the same memory (a claim, not a read-then-write)",
    mutants: [
      {
        id: "claim-unconditional",
        file: "src/store/sqlite/recall.ts",
        find: "WHERE recall_shown.turn <= ?4",
        replace: "WHERE recall_shown.turn <= ?4 OR 1",
        tests: [...RECALL, "test/unit/core/recall/recall-sessions.test.ts"],
      },
    ],
  },
  // --- decay and shown/used ---
  {
    rule: "nightly decay lowers memories shown but not used on the day",
    mutants: [
      {
        id: "decay-ignores-used",
        file: "src/store/sqlite/nightly.ts",
        find: "AND id NOT IN (SELECT memory_id FROM memory_events WHERE kind = 'used' AND at >= :start)`;",
        replace: "`;",
        tests: NIGHTLY,
      },
      {
        id: "decay-min-shown",
        file: "src/store/sqlite/nightly.ts",
        find: "const where = `shown_count >= :minShown AND",
        replace: "const where = `shown_count >= 0 AND",
        tests: NIGHTLY,
      },
    ],
  },
  {
    rule: "decayed strength halves every 30 days towards a floor",
    mutants: [
      {
        id: "half-life",
        file: "src/core/memories/tuning.ts",
        find: "export const DECAY_HALF_LIFE_DAYS = 30;",
        replace: "export const DECAY_HALF_LIFE_DAYS = 15;",
        tests: [...NIGHTLY, "test/unit/core/search/search-score.test.ts", "test/unit/core/memories/memories.test.ts"],
      },
    ],
  },
  // --- graph export ---
  {
    rule: "graph export returns 5000 nodes by default and at most 10000",
    mutants: [
      {
        id: "export-default",
        file: "src/core/graph/tuning.ts",
        find: "export const GRAPH_EXPORT_DEFAULT_LIMIT = 5000;",
        replace: "export const GRAPH_EXPORT_DEFAULT_LIMIT = 500;",
        tests: GRAPH,
      },
      {
        id: "export-max",
        file: "src/core/graph/tuning.ts",
        find: "export const GRAPH_EXPORT_MAX_LIMIT = 10_000;",
        replace: "export const GRAPH_EXPORT_MAX_LIMIT = 20_000;",
        tests: GRAPH,
      },
      {
        id: "export-no-cap",
        file: "src/core/graph/export.ts",
        find: "parseLimit(input.limit, GRAPH_EXPORT_DEFAULT_LIMIT, GRAPH_EXPORT_MAX_LIMIT)",
        replace: "parseLimit(input.limit, GRAPH_EXPORT_DEFAULT_LIMIT, Number.MAX_SAFE_INTEGER)",
        tests: GRAPH,
      },
    ],
  },
  {
    rule: "an exported edge only when both ends are in the slice",
    mutants: [
      {
        id: "edge-one-end-scan",
        file: "src/store/sqlite/graph.ts",
        find: "edges.filter((e) => inSlice.has(e.source) && inSlice.has(e.target))",
        replace: "edges.filter((e) => inSlice.has(e.source) || inSlice.has(e.target))",
        tests: GRAPH,
      },
      {
        id: "edge-one-end-probe",
        file: "src/store/sqlite/graph.ts",
        find: "WHERE from_id IN (SELECT value FROM json_each(:ids)) AND to_id",
        replace: "WHERE from_id IN (SELECT value FROM json_each(:ids)) OR to_id",
        tests: GRAPH,
      },
    ],
  },
  // --- identity ---
  {
    rule: "identity modes: off sees no global sections, global ignores the agent's own, override layers them",
    mutants: [
      {
        id: "mode-off-sees-global",
        file: "src/core/identity/identity.ts",
        find: 'if (mode !== "off") merged = await filesOf(s, null, "global");',
        replace: 'merged = await filesOf(s, null, "global");',
        tests: IDENTITY,
      },
      {
        id: "mode-global-layers",
        file: "src/core/identity/identity.ts",
        find: 'if (agent !== null && mode === "override") {',
        replace: 'if (agent !== null && mode !== "off") {',
        tests: IDENTITY,
      },
      {
        id: "mode-folder-override",
        file: "src/core/identity/identity.ts",
        find: 'return (await sections(s).hasAgentScope(agent)) ? "override" : "global";',
        replace: 'return "global";',
        tests: IDENTITY,
      },
    ],
  },
  {
    rule: "PUT for an agent forced to off or global by config is 409",
    mutants: [
      {
        id: "409-off",
        file: "src/core/identity/identity.ts",
        find: 'if (forced === "off" || forced === "global") {',
        replace: 'if (forced === "global") {',
        tests: IDENTITY,
      },
      {
        id: "409-global",
        file: "src/core/identity/identity.ts",
        find: 'if (forced === "off" || forced === "global") {',
        replace: 'if (forced === "off") {',
        tests: IDENTITY,
      },
    ],
  },
  {
    rule: "identity PUT is all or nothing: one bad name writes nothing",
    mutants: [
      {
        id: "identity-partial-names",
        file: "src/core/identity/identity.ts",
        find: "if (badNames.length > 0) {",
        replace: "if (badNames.length === entries.length) {",
        tests: IDENTITY,
      },
      { id: "identity-no-rollback", file: "src/core/identity/write.ts", find: "    rollBack(dir, entries);\n", replace: "\n", tests: IDENTITY_WRITE },
    ],
  },
  {
    rule: "no identity path escapes the identity folder (symlinks resolved)",
    mutants: [
      {
        id: "inside-dotdot",
        file: "src/core/identity/files.ts",
        find: 'return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));',
        replace: "return true;",
        tests: [...IDENTITY, ...IDENTITY_WRITE],
      },
    ],
  },
  // --- redaction ---
  {
    rule: "secrets are redacted by our rules and the secretlint preset",
    mutants: [
      {
        id: "redact-own-skipped",
        file: "src/core/secrets/redact.ts",
        find: "const own = redactOwn(input);",
        replace: "const own = { text: input, count: 0 };",
        tests: REDACT,
      },
      {
        id: "redact-preset-skipped",
        file: "src/core/secrets/redact.ts",
        find: "const preset = await redactPreset(own.text);",
        replace: "const preset = { text: own.text, count: 0 };",
        tests: REDACT,
      },
    ],
  },
  {
    rule: "a role that is not a speaker name is replaced whole",
    mutants: [
      {
        id: "role-not-redacted",
        file: "src/core/distill/distill.ts",
        find: 'return { text: "[REDACTED:role]", count: 1 };',
        replace: "return { text: role, count: 0 };",
        tests: DISTILL_REDACT,
      },
    ],
  },
  {
    rule: "fragments the model returns are redacted again before storing",
    mutants: [
      {
        id: "fragment-not-redacted",
        file: "src/core/distill/distill.ts",
        find: "    const r = await redactSecrets(f.content);\n",
        replace: "    const r = { text: f.content, count: 0 };\n",
        tests: DISTILL_REDACT,
      },
    ],
  },
  // --- distill transaction ---
  {
    rule: "a distill writes its memories and segment row in one transaction",
    mutants: [
      {
        id: "distill-no-segment-row",
        file: "src/store/sqlite/distill.ts",
        find: 'return h.write(() => q("INSERT INTO segments(key, session_id, memory_count, created_at) VALUES (?, ?, 0, ?) ON CONFLICT(key) DO NOTHING").run(key, sessionId, at).changes === 1);',
        replace: "return h.write(() => true);",
        tests: DISTILL,
      },
    ],
  },
  {
    rule: "at most 40 memories are taken from one model reply, the first 40",
    mutants: [
      {
        id: "max-memories-per-chunk",
        file: "src/core/distill/tuning.ts",
        find: "export const DISTILL_MAX_MEMORIES_PER_CHUNK = 40;",
        replace: "export const DISTILL_MAX_MEMORIES_PER_CHUNK = 400;",
        tests: ["test/http/distill-content.test.ts"],
      },
      {
        id: "last-40",
        file: "src/core/distill/model.ts",
        find: "list.slice(0, DISTILL_MAX_MEMORIES_PER_CHUNK).forEach(",
        replace: "list.slice(-DISTILL_MAX_MEMORIES_PER_CHUNK).forEach(",
        tests: ["test/http/distill-content.test.ts"],
      },
    ],
  },
  // --- FTS ---
  {
    rule: "search terms are quoted, so no user text forms FTS5 syntax",
    mutants: [
      {
        id: "fts-unquoted",
        file: "src/store/sqlite/search-fts.ts",
        find: 'export const quoteOr = (terms: readonly string[]) => terms.map((t) => `"${t.replaceAll(\'"\', \'""\')}"`).join(" OR ");',
        replace: 'export const quoteOr = (terms: readonly string[]) => terms.join(" OR ");',
        tests: SEARCH,
      },
    ],
  },
];
