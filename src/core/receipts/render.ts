import type { ReceiptView } from "./receipts";
import type { ScoreParts } from "./types";

const num = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(3).replace(/0+$/, "").replace(/\.$/, ""));

/** The parts that say something, in reading order: "full_text 6.2, vector 0.71, recency 0.98". */
export function partsText(p: ScoreParts): string {
  const out: string[] = [];
  const add = (name: string, v: number | null | undefined, skip?: number) => {
    if (v === null || v === undefined || v === skip) return;
    out.push(`${name} ${num(v)}`);
  };
  add("full text", p.full_text);
  add("vector", p.vector);
  add("graph", p.graph);
  add("topic", p.topic, 0);
  add("strength", p.strength);
  add("recency", p.recency);
  add("stale", p.stale, 1);
  add("feedback", p.feedback, 1);
  return out.join(", ");
}

/** `memsvc why`: receipts as a readable trace, oldest first (as the session went). */
export function renderReceipts(receipts: readonly ReceiptView[]): string {
  if (receipts.length === 0) return "No receipts yet: nothing was recalled or searched by an agent (or recall.receipts is false).";
  const blocks: string[] = [];
  for (const r of [...receipts].reverse()) {
    const who = [r.session_id ? `session ${r.session_id}` : null, r.turn !== null ? `turn ${r.turn}` : null, r.agent, r.project ? `project ${r.project}` : null]
      .filter(Boolean)
      .join(", ");
    const lines = [
      `${r.at.replace("T", " ").replace(/\.\d+Z$/, "Z")}  ${r.kind === "recall" ? "recall" : `search (${r.via})`}${who ? `  ${who}` : ""}  [receipt ${r.id.slice(0, 8)}]`,
    ];
    lines.push(`  ${r.kind === "recall" ? "prompt" : "query"}: ${r.prompt ?? `(hash ${r.prompt_hash.slice(0, 12)}; recall.receiptPrompt is "hash")`}`);
    const cost = `${r.tokens} token${r.tokens === 1 ? "" : "s"}${r.budget !== null ? ` of a ${r.budget}-token budget` : ""}`;
    lines.push(
      r.injected.length
        ? `  ${r.kind === "recall" ? "injected" : "returned"} ${r.injected.length}, ${cost}:`
        : `  nothing ${r.kind === "recall" ? "injected" : "returned"}${r.dropped.length ? "" : " (no candidate)"}`,
    );
    for (const m of r.injected) {
      lines.push(
        `    ${m.used ? "used " : "     "}${m.short_id}  score ${num(m.score)}${m.tokens !== undefined ? `, ${m.tokens} tokens` : ""}  (${partsText(m.parts)})`,
      );
      lines.push(`          ${m.gist}`);
    }
    if (r.dropped.length) {
      lines.push("  near misses:");
      for (const d of r.dropped) {
        lines.push(`      ${d.short_id}  ${d.reason.padEnd(11)}  score ${num(d.score)}  (${partsText(d.parts)})`);
        lines.push(`          ${d.gist}`);
      }
    }
    blocks.push(lines.join("\n"));
  }
  return blocks.join("\n\n");
}

export const DROP_REASON_HELP =
  "gate: too little of the prompt in it; suppression: shown in this session lately; budget: past recall.maxTokens; threshold: no line strong enough for a block; feedback: wrong, retired or irrelevant here; limit: past the line or result limit.";
