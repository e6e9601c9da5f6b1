/**
 * `bun bench/vectors.ts [--sizes 10000,100000] [--queries 100] [--distributions 100,200000]
 * [--per-distribution 50] [--before <path to another checkout's src/store/sqlite/vector/index.ts>]`:
 * vector index recall@10 against exact float32 cosine and latency, sparse and dense; then, at the
 * --distributions sizes, per query distribution (bench questions, short prompts, long memory-like
 * texts, single identifiers; unfiltered and by project), this index beside the --before one in one
 * process (bench/lib/vector-distributions.ts). `--rss 100000,200000`: the resident memory each index
 * adds at those sizes (dense vectors), each built in a fresh process.
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { vectorFigures } from "./lib/vectors";
import { distributionFigures, indexRss, type IndexCtor } from "./lib/vector-distributions";
import { round } from "./lib/stats";
import { VectorIndex } from "../src/store/sqlite/vector";

const { values } = parseArgs({
  options: {
    sizes: { type: "string" },
    queries: { type: "string" },
    distributions: { type: "string" },
    "per-distribution": { type: "string" },
    before: { type: "string" },
    rss: { type: "string" },
    "rss-child": { type: "string" },
  },
});
if (values["rss-child"]) {
  // One index in this (fresh) process: "<size>:<before|after>".
  const [n, which] = values["rss-child"].split(":");
  const Ctor = which === "before" ? (await import(values.before!)).VectorIndex : VectorIndex;
  console.log(JSON.stringify(indexRss(Number(n), true, Ctor as IndexCtor)));
  process.exit(0);
}
const sizes = values.sizes === "" ? [] : (values.sizes ?? "10000,100000").split(",").map(Number);
const queries = Number(values.queries ?? 100);
const out: Record<string, unknown> = { bench: "vectors", load_average_at_start: loadavg().map((x) => round(x)) };
for (const n of sizes) out[String(n)] = { sparse: vectorFigures(n, queries, false), dense: vectorFigures(n, queries, true) };
const distSizes = values.distributions === undefined ? [] : values.distributions.split(",").map(Number);
if (distSizes.length > 0) {
  const indexes: Record<string, IndexCtor> = {};
  if (values.before) indexes.before = (await import(values.before)).VectorIndex;
  indexes.after = VectorIndex as unknown as IndexCtor;
  const per = Number(values["per-distribution"] ?? 50);
  const dists: Record<string, unknown> = {};
  for (const n of distSizes) dists[String(n)] = { sparse: distributionFigures(n, per, false, indexes), dense: distributionFigures(n, per, true, indexes) };
  out.distributions = dists;
}
if (values.rss) {
  const rss: Record<string, unknown> = {};
  for (const n of values.rss.split(",").map(Number)) {
    const per: Record<string, unknown> = {};
    for (const which of values.before ? ["before", "after"] : ["after"]) {
      const args = ["bench/vectors.ts", "--rss-child", `${n}:${which}`, ...(values.before ? ["--before", values.before] : [])];
      const child = Bun.spawnSync([process.execPath, ...args], { stderr: "inherit" });
      per[which] = JSON.parse(child.stdout.toString());
    }
    rss[String(n)] = per;
  }
  out.rss = rss;
}
out.load_average_at_end = loadavg().map((x) => round(x));
console.log(JSON.stringify(out, null, 2));
