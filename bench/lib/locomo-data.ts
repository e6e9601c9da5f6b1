import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ROOT } from "./server";

/** One dialog turn of the LoCoMo split: `key` is its dia_id, unique within `project`. */
export interface LocomoMemory {
  key: string;
  content: string;
  session_date: string;
  project: string;
}

export interface LocomoQuery {
  question: string;
  project: string;
  evidence: string[];
  category: number;
}

export const CATEGORY_NAMES: Record<number, string> = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop" };
export const SCORED_CATEGORIES = [1, 2, 3, 4];
export const KS = [5, 10] as const;

/** MEMSVC_LOCOMO_DIR, else ../shared/data/locomo-dev next to the project (never inside it). */
export function locomoDir(env = process.env): string {
  return env.MEMSVC_LOCOMO_DIR ? resolve(env.MEMSVC_LOCOMO_DIR) : resolve(ROOT, "../shared/data/locomo-dev");
}

export function loadLocomo(dir: string): { memories: LocomoMemory[]; queries: LocomoQuery[] } | { missing: string } {
  for (const file of ["memories.json", "queries.json"]) {
    if (!existsSync(join(dir, file))) return { missing: join(dir, file) };
  }
  const memories = JSON.parse(readFileSync(join(dir, "memories.json"), "utf8")) as LocomoMemory[];
  const queries = JSON.parse(readFileSync(join(dir, "queries.json"), "utf8")) as LocomoQuery[];
  return { memories, queries };
}

export interface RecallFigures {
  /** Mean recall@k over scored queries. */
  overall: number;
  by_category: Record<string, number>;
}

/** Accumulates per-query recall@k for k in KS, overall and per category. */
export class RecallScorer {
  private readonly sums = new Map<string, number>();
  private readonly counts = new Map<string, number>();

  /** `ranked`: retrieved keys, best first (at least max(KS) when available). */
  add(query: LocomoQuery, ranked: readonly string[]): void {
    const evidence = new Set(query.evidence);
    for (const k of KS) {
      const top = new Set(ranked.slice(0, k));
      const found = [...evidence].filter((e) => top.has(e)).length;
      const r = found / evidence.size;
      for (const bucket of [`${k}:all`, `${k}:${query.category}`]) {
        this.sums.set(bucket, (this.sums.get(bucket) ?? 0) + r);
        this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + 1);
      }
    }
  }

  figures(): Record<string, RecallFigures> {
    const mean = (bucket: string) => round3((this.sums.get(bucket) ?? 0) / (this.counts.get(bucket) || 1));
    const out: Record<string, RecallFigures> = {};
    for (const k of KS) {
      const by: Record<string, number> = {};
      for (const c of SCORED_CATEGORIES) by[`${c}_${CATEGORY_NAMES[c]}`] = mean(`${k}:${c}`);
      out[`recall_at_${k}`] = { overall: mean(`${k}:all`), by_category: by };
    }
    return out;
  }
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
