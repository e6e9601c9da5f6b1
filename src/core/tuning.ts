/**
 * Every ranking and decay constant in one place. Each was chosen for agents'
 * working memory: weeks-long relevance, a few hundred to 100k memories.
 */

/** Effective strength halves after this many days without being refreshed. */
export const DECAY_HALF_LIFE_DAYS = 30;
/** Decay never takes a memory below this share of its strength: old facts stay findable. */
export const DECAY_FLOOR = 0.15;
/** Strength a new memory starts with. */
export const INITIAL_STRENGTH = 1;
/** Added to strength each time an agent fetches the memory (durable). */
export const USE_BOOST = 0.25;
/** Strength never grows past this, so one hot memory cannot dominate forever. */
export const MAX_STRENGTH = 5;

/** Reciprocal rank fusion constant (the usual 60 flattens rank noise past the top few). */
export const RRF_K = 60;
/** Candidates taken from each of BM25 and vector search before fusion. */
export const SEARCH_CANDIDATES = 60;
/**
 * Vector hits below this cosine similarity are noise, not candidates: KNN
 * always returns k rows, however unrelated. The spaces differ (bge puts
 * unrelated texts near 0.4; hashed vectors of unrelated texts near 0).
 */
export const VECTOR_MIN_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.45, fallback: 0.08 };
/**
 * Weight of the vector list in the fusion (BM25's is 1). The hashing
 * fallback is a weaker copy of the lexical signal (no IDF: a speaker's name
 * weighs as much as the topic): on LoCoMo (bench/locomo.ts) its list found 14
 * evidence turns BM25 missed against 197 the other way, and every weight
 * above ~0.05 lowered recall (1: r@5 0.469, 0.3: 0.498, 0.05: 0.533, 0.02:
 * 0.539). At 0.02 it breaks ties among BM25 hits and fills in when BM25 finds
 * too little. bge vectors carry meaning BM25 lacks: full weight (not yet
 * measured here, no model download on the bench machines).
 */
export const VECTOR_RRF_WEIGHT: Record<"onnx" | "fallback", number> = { onnx: 1, fallback: 0.02 };
/** Fused results whose graph neighbours are pulled in. */
export const GRAPH_SEEDS = 8;
/** A neighbour inherits this share of its seed's relevance, times the link weight. */
export const GRAPH_HOP_FACTOR = 0.35;
/**
 * ...and a neighbour BM25 or the vectors already found gets this share. Most
 * links join near-duplicates (similarity links), so adding the seed's
 * relevance counts the same evidence twice and crowds the top with look-alikes:
 * on LoCoMo, 0.35 here cost 10 points of recall@5 (0.469 -> 0.372). Graph
 * traversal is for what the query does not match.
 */
export const GRAPH_HOP_DIRECT_FACTOR = 0;
/**
 * bm25() scores every row an FTS5 query matches before LIMIT (~1 us a row
 * here): an OR of common words over 100k memories matched 30k rows and took
 * ~30 ms. Above this many rows, only rows holding the query's rarest words
 * are scored (still ranked by its other words); see bm25Expression(). Scaled
 * down to LoCoMo's 2,760 turns, 4% of the store kept recall@10 at 0.606
 * (0.612 unpruned); 2% gave 0.587.
 */
export const BM25_MAX_SCORED_ROWS = 4000;
/**
 * ...and the words ranking those rows stop once their occurrences add up to
 * this: bm25() reads every occurrence of every word of the expression to
 * weigh it, so a long query of common words cost ~300 ms at 100k. On LoCoMo
 * (scaled: 20% of the store) it cost 0.001 of recall@10 against 60%; on the
 * synthetic 100k store (bench/http.ts) the BM25 step took 4.6 ms instead of 6.3.
 */
export const BM25_MAX_WEIGHED_POSTINGS = 20_000;
/** Cached word counts are dropped once the store grew or shrank by this share, */
export const BM25_TERM_COUNTS_DRIFT = 0.1;
/** ...or once this many words are cached (a bound on memory). */
export const BM25_TERM_COUNTS_MAX = 50_000;
/** How much effective strength moves the composite score (0 = pure relevance). */
export const STRENGTH_WEIGHT = 0.2;

/** /recent importance: weight of effective strength, connections and recency. */
export const RECENT_STRENGTH_WEIGHT = 1;
export const RECENT_CONNECTION_WEIGHT = 0.35;
export const RECENT_RECENCY_WEIGHT = 1.5;
/** /recent recency fades with this time constant (days). */
export const RECENT_RECENCY_DAYS = 7;
/**
 * /recent reads this many of the strongest, the most linked and the newest
 * memories from indexes and ranks only those, when that provably holds the
 * top results (else it scores every row from a covering index: ~26 ms at 100k).
 */
export const RECENT_CANDIDATES = 1000;

/**
 * The vector index scores every row with an exact int8 dot product (WebAssembly
 * SIMD) and rescores this many of the best with the float query, per result
 * asked (at least VECTOR_RESCORE_MIN). There is no prefilter any more: the
 * sign-bit Hamming prefilter (VECTOR_PREFILTER_*, VECTOR_COARSE_*, removed)
 * kept recall@10 against float32 at 0.54 (sparse offline vectors) and 0.95
 * (dense, rotated) at 100k (bench/vectors.ts, load ~8-15). The full int8 scan
 * with these values measured 0.987 sparse / 0.992 dense at 100k (0.990 /
 * 0.997 at 10k); the kernel costs ~1.2-1.6 ms at 100k (relaxed SIMD), the
 * selection and rescoring ~0.3 ms. Not swept: the int8 order already holds
 * nearly all of the true top 10, so 4x k only settles near-ties cheaply
 * (120 rows x 384 multiply-adds for the search's 30 candidates).
 */
export const VECTOR_RESCORE_FACTOR = 4;
export const VECTOR_RESCORE_MIN = 40;
/**
 * A project holding less than this share of the store is scanned row by row
 * (one kernel call per row) instead of scanning the whole store: at 100k a
 * 1/30 project measured ~0.2-0.4 ms this way against ~1.5 ms for the full
 * scan; at a quarter the per-call overhead makes both about equal.
 */
export const VECTOR_GROUP_SCAN_SHARE = 0.25;

/**
 * Stores with more vectors than this load their index after the server
 * listens (from the index file, else streamed from vec0; search is BM25-only
 * meanwhile) and keep an index file; smaller ones load before it listens, so
 * tests and small homes never see a partial index. bench/http.ts (load 9-14):
 * 10k loaded before listening gave the first /health 200 at 519 ms against
 * 502 ms before this change; 200k streamed from vec0 took ~3 s, so waiting for
 * it would miss the 300 ms start-up target by far. A file this many changes
 * behind is skipped: one vec0 scan beats replaying the log row by row.
 */
export const INDEX_BACKGROUND_ABOVE = 10_000;
/**
 * Vectors read per background step: ~15 us each from vec0 (200k in ~3 s), so
 * ~7 ms steps between requests. 2000 made every /health during a 30k load
 * take 25-50 ms (measured); the steps' own overhead is negligible either way.
 */
export const INDEX_LOAD_CHUNK = 500;
/**
 * vector_changes rows kept behind the newest at start-up (~20 bytes each, so
 * ~4 MB): covers an index file or another server that is up to 200k writes
 * behind; further behind, they reload from vec0 (correct, just slower).
 */
export const VECTOR_CHANGES_KEEP = 200_000;

/**
 * WAL pages before SQLite checkpoints (its default is 1000). One ingest dirties
 * many pages (memory row, FTS segment, vec0 chunk, tags, links, eight indexes),
 * most of them the same hot pages again and again; a longer WAL copies each
 * hot page once per checkpoint instead of many times. In-process ingest at 30k
 * memories (load ~6): 6.5 ms a memory at 1000 pages, 3.9-5.0 ms at 8000. The
 * WAL may reach ~32 MB between checkpoints; closing the store truncates it.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 8000;

/** Longest query text embedded or tokenised; longer input is cut, never rejected. */
export const QUERY_MAX_CHARS = 2000;
/** Most distinct keywords OR-ed into one FTS5 query. */
export const QUERY_MAX_TERMS = 32;

export const DEFAULT_SEARCH_LIMIT = 8;
export const DEFAULT_RECENT_LIMIT = 12;
export const MAX_LIMIT = 100;

/** A new memory links to at most this many of its nearest neighbours... */
export const LINK_MAX_NEAREST = 3;
/**
 * ...whose cosine similarity is at least this. The spaces differ: bge vectors
 * sit close together (unrelated texts score ~0.5), hashed vectors far apart.
 */
export const LINK_MIN_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.78, fallback: 0.45 };

/**
 * Largest identity section body accepted by PUT /identity (UTF-8 bytes).
 * Sections are injected verbatim into every session start; anything bigger
 * than a long style guide would crowd out the agent's context.
 */
export const IDENTITY_SECTION_MAX_BYTES = 256 * 1024;

/* ---- Capture: POST /distill ---- */

/** A distilled fragment shorter than this (characters) cannot state a fact with its context. */
export const SUBSTANCE_MIN_CHARS = 20;
/** ...nor one with fewer topic words than this (subject, predicate, object). */
export const SUBSTANCE_MIN_KEYWORDS = 3;
/** A fragment whose lines are more than this share tool output (JSON, paths, stack frames) is noise. */
export const SUBSTANCE_MAX_NOISE_SHARE = 0.6;
/** A distilled memory longer than this is a pasted transcript, not a memory: dropped as "too long". */
export const DISTILL_MEMORY_MAX_CHARS = 4000;
/** At most this many memories are taken from one model reply; the rest are logged and ignored. */
export const DISTILL_MAX_MEMORIES_PER_CHUNK = 40;
/**
 * A /distill body needing more model calls than this is refused (413): at
 * seconds to minutes per call it would outlive any client. Capture clients
 * split long deltas into segments well below it.
 */
export const DISTILL_MAX_CHUNKS = 100;
/** Share of the model's context (llm.contextChars) kept free for its answer. */
export const DISTILL_ANSWER_SHARE = 0.25;
/** Smallest transcript chunk worth a model call, whatever the configured context. */
export const DISTILL_MIN_CHUNK_CHARS = 2000;
/** Existing memories shown to the model per chunk, so it can name relationships to them. */
export const DISTILL_CONTEXT_MEMORIES = 6;
/**
 * A new memory this close (cosine) to an existing one of the same project is
 * the same memory: the existing one is strengthened (and updated when the new
 * text adds words) instead of stored twice. Measured with the lexical
 * fallback: paraphrases score 0.80-0.93, a different fact with the same words
 * ("staging db on 5433" vs "production db on 5432") 0.62, an extension with a
 * new clause 0.73. bge-small puts paraphrases above ~0.92 and related but
 * distinct facts at 0.80-0.90.
 */
export const DISTILL_MERGE_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.92, fallback: 0.75 };
/** Strength added to an existing memory each time capture finds it again. */
export const DISTILL_MERGE_BOOST = 0.2;
/** When the new text keeps this share of the old one's topic words, it replaces the old text (a restatement or correction). */
export const DISTILL_REPLACE_COVERAGE = 0.75;
/** A merged memory never grows past this; beyond it the new text is stored on its own and linked. */
export const DISTILL_MERGED_MAX_CHARS = 1500;
/** Weight of a link the model named explicitly (similarity links use the cosine). */
export const DISTILL_MODEL_LINK_WEIGHT = 0.9;
/** A whole transcript this short that fails the substance gate ("ok thanks") is answered without a model call. */
export const DISTILL_TRIVIAL_TRANSCRIPT_CHARS = 500;
/** Longest `dropped[].content` echoed back and logged: the gist, not the bulk. */
export const DISTILL_DROPPED_PREVIEW_CHARS = 300;

/** REST neighbors/hubs and memsvc_graph list this many memories unless told (the tool's spec default). */
export const GRAPH_DEFAULT_LIMIT = 10;
/** Graph export slice (spec): default and hard cap of nodes; beyond ~10k a browser layout stalls. */
export const GRAPH_EXPORT_DEFAULT_LIMIT = 5000;
export const GRAPH_EXPORT_MAX_LIMIT = 10_000;
/** Export nodes carry this much content (hover text, search); the page loads the rest on click. */
export const GRAPH_PREVIEW_CHARS = 200;
/** Path search gives up past this many hops: longer chains say little about how two memories relate. */
export const GRAPH_PATH_MAX_HOPS = 6;
/** ...or once this many memories were reached, so one query cannot walk a huge store for long. */
export const GRAPH_PATH_MAX_VISITED = 50_000;

/** /recall-index: a prompt shorter than this (trimmed) is an acknowledgement ("ok", "go on"), not a topic. */
export const RECALL_MIN_PROMPT_CHARS = 12;
/** ...and so is one with fewer distinct keywords than this ("yes, do it"). */
export const RECALL_MIN_KEYWORDS = 2;
/** At most this many lines in the block: an index the agent reads on every prompt. */
export const RECALL_MAX_LINES = 5;
/** Candidates taken from each retriever before the gates (few: the block is short). */
export const RECALL_CANDIDATES = 20;
/** With a project, this many project-less (global) memories may compete, under RECALL_GLOBAL_SIMILARITY. */
export const RECALL_GLOBAL_CANDIDATES = 10;
/** A memory shown in a session is not listed there again for this many turns (spec: about 30). */
export const RECALL_SUPPRESS_TURNS = 30;
/** Longest one-line gist of a memory in the block. */
export const RECALL_GIST_CHARS = 110;
/** A candidate must share at least this many distinct (stemmed) keywords with the prompt. */
export const RECALL_MIN_OVERLAP = 2;
/** Similarity a memory found by both BM25 and vector search must reach. Tuned on LoCoMo vs unrelated prompts (bench/recall.ts). */
export const RECALL_MIN_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.62, fallback: 0.25 };
/** Similarity at which the vector retriever alone is trusted. */
export const RECALL_STRONG_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.75, fallback: 0.4 };
/** Similarity a project-less memory must reach to be recalled for a project (with one more shared keyword). */
export const RECALL_GLOBAL_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.8, fallback: 0.45 };
/** Recall state of sessions idle this long is dropped by the nightly job. */
export const RECALL_SESSION_TTL_DAYS = 14;
/** Existing memories below this similarity to a chunk are not worth showing the model. */
export const DISTILL_CONTEXT_MIN_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.6, fallback: 0.15 };

/** GET /learnings and memsvc_learnings: default look-back (spec: 7 days) and its cap. */
export const LEARNINGS_DEFAULT_DAYS = 7;
export const LEARNINGS_MAX_DAYS = 365;
/** Most learnings returned; the session-start block lists fewer, each cut to a paragraph. */
export const LEARNINGS_MAX = 50;
export const LEARNINGS_BLOCK_MAX = 12;
export const LEARNINGS_BLOCK_CHARS = 400;

/** GET /index: most domains listed; keywords per domain from this many of its newest memories. */
export const DOMAIN_INDEX_MAX = 100;
export const DOMAIN_KEYWORD_SAMPLE = 40;
export const DOMAIN_KEYWORDS = 8;
/** GET /index (about a second of work at 100k memories) is reused while the memory count and newest memory are unchanged, up to this long. */
export const DOMAIN_INDEX_CACHE_MS = 60_000;

/** Nightly consolidation: most memories sent to the model in one call (the context budget cuts first). */
export const NIGHTLY_CHUNK_MAX_MEMORIES = 40;
/** Longest memory text sent to the model; distilled memories are far shorter. */
export const NIGHTLY_MEMORY_MAX_CHARS = 1500;
/** Learnings kept from one model answer; more is the model padding its list. */
export const NIGHTLY_MAX_LEARNINGS_PER_CALL = 6;
/** A learning shorter than this says nothing actionable. */
export const NIGHTLY_MIN_LEARNING_CHARS = 20;
/**
 * A memory shown this many times or more, shown on the consolidated day and
 * not fetched since, is being ignored: its stored strength is multiplied by
 * IGNORED_DECAY_FACTOR (never below IGNORED_MIN_STRENGTH). Showing refreshes
 * the decay clock, so without this an ignored memory would never fade.
 */
export const IGNORED_MIN_SHOWN = 3;
export const IGNORED_DECAY_FACTOR = 0.9;
export const IGNORED_MIN_STRENGTH = 0.2;
/**
 * Pruning deletes a memory only when all hold: effective strength below
 * PRUNE_STRENGTH_FLOOR (untouched decay alone never gets there: DECAY_FLOOR
 * keeps a never-shown memory at 0.15 or more; it takes ignored showings),
 * never used, older than PRUNE_MIN_AGE_DAYS, and not a learning.
 */
export const PRUNE_STRENGTH_FLOOR = 0.1;
export const PRUNE_MIN_AGE_DAYS = 30;
/** Most deletions per run: a bad tuning change cannot empty the store in one night. */
export const PRUNE_MAX_PER_RUN = 1000;
/** Near-duplicates (same project and type) are merged at or above this cosine similarity. */
export const MERGE_MIN_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.95, fallback: 0.9 };
/** Most merges per run. */
export const MERGE_MAX_PER_RUN = 500;
/** A scheduled run also catches up on days of this look-back that have no finished run (server was down). */
export const NIGHTLY_CATCHUP_DAYS = 3;
/** A run whose owner has not reported for this long is taken to be dead and is resumed. */
export const NIGHTLY_LEASE_MS = 15 * 60_000;

/* ---- Capture client (memsvc capture): local denoising without a model ---- */

/** A tool call is kept as a one-line summary of at most this many characters (command, path, pattern). */
export const CAPTURE_TOOL_INPUT_CHARS = 200;
/** Head of a tool result kept: enough for "file not found" or a test summary, not the file itself. */
export const CAPTURE_TOOL_OUTPUT_CHARS = 300;
/** Failed tool results keep more: the error is often the lesson. */
export const CAPTURE_TOOL_ERROR_CHARS = 800;
/** A human or agent message longer than this is pasted bulk: its head and tail are kept. */
export const CAPTURE_MESSAGE_MAX_CHARS = 8000;
/** A delta bigger than this (denoised characters) is shipped as several segments. */
export const CAPTURE_SEGMENT_MAX_CHARS = 40_000;
/**
 * Hard wall-clock budget of each `memsvc hook` event (ms), after which it
 * exits silently. The prompt hook runs before the agent sees every prompt:
 * with ~100 ms of process start it stays under 1 s.
 */
export const HOOK_BUDGET_MS = { "user-prompt": 700, "session-start": 2500, "pre-compact": 1500, "session-end": 1500 } as const;

/** MCP event streams (/sse, /mcp) send a comment this often: Bun.serve closes a connection idle for idleTimeout (10 s by default, 60 s in memsvc server), which would end the session. */
export const MCP_KEEPALIVE_MS = 5_000;
/** Open /mcp (Streamable HTTP) sessions kept at most; a client may vanish without DELETE, so past this the least recently used is closed. */
export const MCP_MAX_STREAMABLE_SESSIONS = 1000;

/** GET /dashboard/data: days of growth and recall history shown unless told, and the cap (a year of daily points still draws). */
export const DASHBOARD_DEFAULT_DAYS = 30;
export const DASHBOARD_MAX_DAYS = 365;
/** Primary domains drawn by name; the rest are one "other" slice (more slices than this are unreadable). */
export const DASHBOARD_TOP_DOMAINS = 8;
/** Nightly digests shown: a week of runs. */
export const DASHBOARD_DIGESTS = 7;

/**
 * Recall's keyword retriever leaves out words found in more than this share
 * of memories (but at least RECALL_FTS_MAX_DF_MIN): they match a large part of
 * the store, cost most of the hot path's time in bm25() and carry little
 * information. They still count for the keyword-overlap gate.
 */
export const RECALL_FTS_MAX_DF_SHARE = 0.01;
export const RECALL_FTS_MAX_DF_MIN = 200;
/** ...and uses at most this many of the prompt's rarest words. */
export const RECALL_FTS_MAX_TERMS = 8;
