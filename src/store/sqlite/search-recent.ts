import type { Database } from "bun:sqlite";
import { effectiveStrength } from "../../core/memories";
import { effectiveStrengthSql } from "./strength";
import { fromSql, touchedBound } from "../../core/search/recent";
import type { RankedRow } from "../../core/search/store";
import { RECENT_CONNECTION_WEIGHT, RECENT_RECENCY_DAYS, RECENT_RECENCY_WEIGHT, RECENT_STRENGTH_WEIGHT } from "../../core/search/tuning";
import { RECENT_LINK_LIST_FROM, RECENT_LIST_FIRST, RECENT_WALK_FIRST } from "./tuning";

/**
 * GET /recent on SQLite: importance computed inside SQLite, exact, by the
 * threshold algorithm over three lists read from indexes (walkTouched): the
 * rows by `touched` (the later of created_at and refreshed_at: both time terms
 * of importance only fall as it gets older), by link count and by strength,
 * each highest first. A row none of the lists has reached yet has all three at
 * most where each list stands, so its importance is at most touchedBound of
 * those; once the k-th best row read beats that, nothing unread can enter.
 * scoreAll, which scores every row, is the reference the tests compare it with.
 */
const IMPORTANCE = `(${RECENT_STRENGTH_WEIGHT} * ${effectiveStrengthSql()}
  + ${RECENT_CONNECTION_WEIGHT} * ln(1 + link_count)
  + ${RECENT_RECENCY_WEIGHT} * exp(-(max(0, :now - created_at)) / ${RECENT_RECENCY_DAYS * 86_400_000}.0))`;
/** Spelled as in migration 0012's indexes, or the planner will not use them. */
const TOUCHED = "max(created_at, refreshed_at)";
/**
 * ln(1 + x) <= ln 4 + (x - 3) / 4 for every x > -1 (ln is concave: its tangent
 * at x = 3 lies above it; 3 is about the median link count), so the cheap test
 * below can bound the connection term without calling ln.
 */
const LINKS_SLOPE = RECENT_CONNECTION_WEIGHT / 4;
const LINKS_AT_ZERO = RECENT_CONNECTION_WEIGHT * (Math.log(4) - 3 / 4);

export type RecentParams = { now: number; project: string | null; limit: number };
type Raw = Record<string, any> & { importance: number };
type Scored = { seq: number; importance: number | null };

const WHERE_PROJECT = "(:project IS NULL OR project = :project)";

export function recentRows(sqlite: Database, p: RecentParams): RankedRow[] {
  const top = walkTouched(sqlite, p);
  return top.map((r) => ({ ...fromSql(r), importance: r.importance }));
}

/** Scores every row (of the project): the reference answer, and the fallback. */
export function scoreAll(sqlite: Database, p: RecentParams): Raw[] {
  // The inner scan reads only a covering index (memories_project_touched holds every column importance reads); full rows are read for the winners.
  return sqlite
    .query<Raw, RecentParams>(
      `SELECT m.*, t.importance FROM (SELECT seq, ${IMPORTANCE} AS importance FROM memories WHERE ${WHERE_PROJECT} ORDER BY importance DESC, seq DESC LIMIT :limit) t
         JOIN memories m ON m.seq = t.seq ORDER BY t.importance DESC, t.seq DESC`,
    )
    .all(p);
}

type Key = "touched" | "links" | "strength";
const COLUMN: Record<Key, string> = { touched: TOUCHED, links: "link_count", strength: "strength" };

/**
 * The statements of one walk: all memories, or one project's (two spellings,
 * so each uses its index: memories_(project_)touched, memories_(project_)link_count,
 * memories_strength or the (project, strength) index).
 */
function walkStatements(sqlite: Database, project: string | null) {
  const extra: Record<string, string> = project === null ? {} : { project };
  const statements = (key: Key) => {
    const col = COLUMN[key];
    // The link lists are partial indexes (migration 0014): the planner uses them only when the query names their cut, as a literal.
    const terms = [project === null ? "" : "project = :project", key === "links" ? `link_count >= ${RECENT_LINK_LIST_FROM}` : ""].filter(Boolean);
    const and = terms.map((t) => `${t} AND`).join(" ");
    // The value of the (:skip + 1)-th row at or below :hi, read from the index alone.
    const cut = sqlite.query<{ v: number }, Record<string, number | string>>(
      `SELECT ${col} AS v FROM memories WHERE ${and} ${col} <= :hi ORDER BY ${col} DESC LIMIT 1 OFFSET :skip`,
    );
    const max = sqlite.query<{ v: number | null }, Record<string, string>>(
      `SELECT max(${col}) AS v FROM memories ${terms.length ? `WHERE ${terms.join(" AND ")}` : ""}`,
    );
    // The best rows in (:lo, :hi] that pass the cheap test, which lets through every
    // row that can reach the floor: importance is at most strength * :strong +
    // link_count * LINKS_SLOPE + LINKS_AT_ZERO + the recency the range allows, where
    // :strong is W_S times the largest decay factor in the range, and :need the floor
    // less the constant terms (walkTouched's cheapTest). A negative strength is let
    // through: decay lifts it, so the product is no bound. Plain arithmetic on two
    // index columns: no pow, exp or ln, nor any SQL function (a call per row costs
    // more than the rest of the test), for the rows it drops.
    const read = sqlite.query<Scored, Record<string, number | string>>(
      `SELECT seq, ${IMPORTANCE} AS importance FROM memories
         WHERE ${and} ${col} > :lo AND ${col} <= :hi AND (strength * :strong + link_count * ${LINKS_SLOPE} >= :need OR strength < 0)
         ORDER BY importance DESC, seq DESC LIMIT :limit`,
    );
    return {
      cut: (hi: number, skip: number) => cut.get({ hi, skip, ...extra })?.v ?? null,
      max: () => max.get(extra)!.v,
      read: (q: { now: number; limit: number; lo: number; hi: number; strong: number; need: number }) => read.all({ ...q, ...extra }),
    };
  };
  const rows = sqlite.query<Raw, { seqs: string }>(`SELECT * FROM memories WHERE seq IN (SELECT value FROM json_each(:seqs))`);
  return {
    touched: statements("touched"),
    links: statements("links"),
    strength: statements("strength"),
    rows: (seqs: number[]) => rows.all({ seqs: JSON.stringify(seqs) }),
  };
}

/** Slack for SQLite's and JavaScript's pow/exp/ln disagreeing in the last bits: the walk widens, never narrows, by it. */
const SLACK = 1e-9;
/** Before every time SQLite can store (ms since the epoch, ±8.64e15 is JavaScript's Date range). */
const EARLIEST = -8.64e15;

/** The lists' turns: the short ones first (a few hubs or strong memories hold the bound up, and a batch of them is cheap). */
const ORDER: Key[] = ["links", "strength", "touched"];

/** SQLite's order of `importance DESC, seq DESC`: NULL lowest. */
const byImportance = (a: Scored, b: Scored) => (b.importance ?? -Infinity) - (a.importance ?? -Infinity) || b.seq - a.seq;

/**
 * The exact top rows, read from three sorted lists (Fagin's threshold
 * algorithm). Each list (`touched`, link count, strength) is read highest
 * first in batches of whole values, from a cut found in its index:
 * `stand` is the largest value not read yet. The newest RECENT_WALK_FIRST rows
 * give a first floor (the k-th best read, less SLACK). A row no list has read
 * has touched, links and strength at most the stands, so its importance is
 * at most touchedBound of them: once that is below the floor, the rows read
 * hold the answer. While it is not, either the rows touched since the time
 * at which the bound falls below the floor fit in the next batch (read them
 * and stop), or one more batch is read from each list in turn, the link and
 * strength lists first: a few hubs or very strong memories keep the bound up
 * at every age, and their lists' heads drop fast. Batches double each time.
 * `batches` sets the first batch sizes (tests make them small).
 */
export function walkTouched(sqlite: Database, p: RecentParams, batches = { touched: RECENT_WALK_FIRST, lists: RECENT_LIST_FIRST }): Raw[] {
  if (p.limit === 0) return [];
  const q = walkStatements(sqlite, p.project);
  const k = p.limit;
  let top: Scored[] = [];
  const take = (rows: Scored[]) => {
    if (rows.length === 0) return;
    const have = new Set(top.map((r) => r.seq));
    top = top
      .concat(rows.filter((r) => !have.has(r.seq)))
      .sort(byImportance)
      .slice(0, k);
  };
  const floor = () => (top.length < k ? -Infinity : top[k - 1].importance === null ? NaN : top[k - 1].importance! - SLACK);
  // `bottom`: where a list ends. The link list holds only rows with at least
  // RECENT_LINK_LIST_FROM links; read to its end, it bounds every other row by one less.
  const linksBelow = RECENT_LINK_LIST_FROM - 1;
  const lists = {
    touched: { q: q.touched, hi: Infinity, stand: q.touched.max(), size: batches.touched, bottom: -Infinity },
    links: { q: q.links, hi: Infinity, stand: q.links.max() ?? linksBelow, size: batches.lists, bottom: linksBelow },
    strength: { q: q.strength, hi: Infinity, stand: q.strength.max(), size: batches.lists, bottom: -Infinity },
  };
  if (lists.links.stand === linksBelow) lists.links.hi = linksBelow;
  if (lists.touched.stand === null) return [];
  let done = false;
  /**
   * The cheap test's terms for rows read from (lo, hi] of a list: a row touched
   * at most `hi` has decayed at least to effectiveStrength(1, hi) and was created
   * no later than `hi` (nothing is known of the time of rows from the other lists).
   */
  const cheapTest = (key: Key, hi: number) => {
    const f = floor();
    const old = key === "touched" && hi < p.now;
    const strong = RECENT_STRENGTH_WEIGHT * (old ? effectiveStrength(1, hi, p.now) : 1);
    const recency = RECENT_RECENCY_WEIGHT * (old ? Math.exp(-(p.now - hi) / (RECENT_RECENCY_DAYS * 86_400_000)) : 1);
    return { strong, need: Number.isFinite(f) ? f - recency - LINKS_AT_ZERO : -Infinity };
  };
  const read = (key: Key, lo: number) => {
    const list = lists[key];
    take(list.q.read({ now: p.now, limit: k, lo, hi: list.hi, ...cheapTest(key, list.hi) }));
    list.hi = lo;
    list.stand = lo;
    // Every row of a whole list read: every row (of the project) was.
    if (lo === -Infinity) done = true;
  };
  /** One batch of whole values from a list (false, and nothing read, when its top value alone holds more rows or it is read to its end); the next is twice as large. */
  const advance = (key: Key, cut?: number | null) => {
    const list = lists[key];
    if (list.hi <= list.bottom) return false;
    cut = cut === undefined ? list.q.cut(list.hi, list.size) : cut;
    list.size *= 2;
    if (cut === list.stand) return false;
    read(key, cut ?? list.bottom);
    return true;
  };
  const bound = (t: number) => touchedBound(Math.max(0, lists.strength.stand ?? 0), Math.max(0, lists.links.stand ?? 0), t, p.now);
  /** The latest time whose bound is below the floor (the bound only grows with time), or null if there is none. */
  const since = (f: number) => {
    let lo = EARLIEST;
    let hi = lists.touched.stand!;
    if (bound(lo) >= f) return null;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (bound(mid) >= f) hi = mid;
      else lo = mid;
    }
    return lo;
  };

  // The first floor: the newest rows (a batch; more when they share one time).
  while (!advance("touched"));
  for (let turn = 0; !done; turn++) {
    const f = floor();
    // A NULL importance (a value no write path stores, e.g. a negative link count) proves nothing: score every row.
    if (Number.isNaN(f)) return scoreAll(sqlite, p);
    if (f !== -Infinity && bound(lists.touched.stand!) < f) break;
    const touched = lists.touched;
    const cut = touched.q.cut(touched.hi, touched.size);
    const t = f === -Infinity ? null : since(f);
    if (t !== null && (cut === null || t >= cut)) {
      read("touched", t);
      break;
    }
    // The lists in turn; the touched list when another one cannot move.
    const key = ORDER[turn % ORDER.length];
    if (key === "touched" || !advance(key)) advance("touched", cut);
  }
  const rows = new Map(q.rows(top.map((r) => r.seq)).map((r) => [r.seq as number, r]));
  return top.map((r) => ({ ...rows.get(r.seq)!, importance: r.importance! }));
}
