import type { GraphMemory, HubsResult, NeighborsResult, PathResult } from "./graph";
import { counted } from "../text";

/**
 * Plain-text renderings of the graph operations, for the memsvc_graph tool:
 * one line per memory, short ids an agent can pass back to memsvc_get.
 */

const day = (iso: string) => iso.slice(0, 10);

function describe(m: Pick<GraphMemory, "memory_type" | "domain" | "created_at">): string {
  return `${m.memory_type}, ${m.domain}, ${day(m.created_at)}`;
}

export function neighborsText(r: NeighborsResult): string {
  const m = r.memory;
  const head = `Memory ${m.short_id} (${m.memory_type}, ${m.domain}, ${day(m.created_at)}): ${m.content.replace(/\s+/g, " ").slice(0, 200)}`;
  if (r.total === 0) return `${head}\nNo linked memories${r.relationship ? ` with relationship "${r.relationship}"` : ""}.`;
  const shown = r.count < r.total ? `showing ${r.count} of ${r.total}` : `${r.total}`;
  const lines = r.neighbors.map((n) => {
    const rels = n.relationships.map((l) => (l.direction === "out" ? `${l.relationship} → ${l.weight}` : `← ${l.relationship} ${l.weight}`)).join("; ");
    return `- ${n.short_id} [${rels}] (${describe(n)}, ${counted(n.connections, "link")}): ${n.preview}`;
  });
  return `${head}\nLinked memories (${shown}${r.relationship ? `, relationship "${r.relationship}"` : ""}), strongest link first:\n${lines.join("\n")}`;
}

export function hubsText(r: HubsResult): string {
  const where = r.domain ? ` in domain "${r.domain}"` : "";
  if (r.count === 0) return `No linked memories${where} yet.`;
  const lines = r.hubs.map(
    (h, i) => `${i + 1}. ${h.short_id}: ${counted(h.connections, "link")} (${describe(h)}, strength ${h.effective_strength}): ${h.preview}`,
  );
  return `Hub memories${where}, most links first:\n${lines.join("\n")}`;
}

export function pathText(r: PathResult): string {
  if (!r.found) return r.message ?? `No link path from ${r.from.slice(0, 8)} to ${r.to.slice(0, 8)}.`;
  if (r.hops === 0) return `${r.path[0].short_id} is the memory itself (0 links): ${r.path[0].preview}`;
  const lines = [`Shortest path from ${r.from.slice(0, 8)} to ${r.to.slice(0, 8)} (${r.hops} link${r.hops === 1 ? "" : "s"}):`];
  r.path.forEach((m, i) => {
    lines.push(`${i}. ${m.short_id} (${describe(m)}): ${m.preview}`);
    const l = r.links[i];
    if (l) lines.push(`   ${l.from_id === m.id ? `-- ${l.relationship} (${l.weight}) -->` : `<-- ${l.relationship} (${l.weight}) --`}`);
  });
  return lines.join("\n");
}
