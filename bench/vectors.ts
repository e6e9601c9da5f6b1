/**
 * `bun bench/vectors.ts [--sizes 10000,100000] [--queries 100]`: vector index
 * recall@10 against exact float32 cosine and latency, sparse and dense.
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { vectorFigures } from "./lib/vectors";
import { round } from "./lib/stats";

const { values } = parseArgs({ options: { sizes: { type: "string" }, queries: { type: "string" } } });
const sizes = (values.sizes ?? "10000,100000").split(",").map(Number);
const queries = Number(values.queries ?? 100);
const out: Record<string, unknown> = { bench: "vectors", load_average_at_start: loadavg().map((x) => round(x)) };
for (const n of sizes) out[String(n)] = { sparse: vectorFigures(n, queries, false), dense: vectorFigures(n, queries, true) };
out.load_average_at_end = loadavg().map((x) => round(x));
console.log(JSON.stringify(out, null, 2));
