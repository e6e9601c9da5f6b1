import { redactSecrets } from "../secrets";
import { keywords, stem } from "../text";
import { DISTILL_EVIDENCE_LINE_CHARS, DISTILL_EVIDENCE_MAX_CHARS } from "./tuning";

/**
 * The evidence excerpt of an anchored memory: the lines of the segment it
 * came from that it rests on, kept (bounded) so the nightly re-check can ask
 * the model whether the memory still holds once its code changed. The
 * segment text handed in is already denoised by the client and redacted by
 * /distill; the excerpt is redacted once more before it is stored. This is
 * the one deliberate exception to "raw session content is discarded": a few
 * lines per anchored memory, never the transcript, and off with
 * distill.keepEvidence = false.
 */

const flat = (t: string) => t.replace(/\s+/g, " ").trim().toLowerCase();

/** The chunk's lines, long ones cut at whitespace into pieces of at most DISTILL_EVIDENCE_LINE_CHARS. */
export function evidenceLines(chunk: string): string[] {
  const out: string[] = [];
  for (const raw of chunk.split("\n")) {
    let line = raw.trim();
    while (line.length > DISTILL_EVIDENCE_LINE_CHARS) {
      const cut = line.lastIndexOf(" ", DISTILL_EVIDENCE_LINE_CHARS);
      const at = cut > DISTILL_EVIDENCE_LINE_CHARS / 2 ? cut : DISTILL_EVIDENCE_LINE_CHARS;
      out.push(line.slice(0, at).trim());
      line = line.slice(at).trim();
    }
    if (line) out.push(line);
  }
  return out;
}

/** The model's quotes that really are in the chunk (a paraphrase or an invention is not evidence): the lines holding them. */
function quotedLines(lines: readonly string[], quotes: readonly string[]): number[] {
  const wanted = quotes.map(flat).filter((q) => q.length >= 12);
  const hits: number[] = [];
  lines.forEach((line, i) => {
    const l = flat(line);
    if (l.length >= 12 && wanted.some((q) => l.includes(q) || q.includes(l))) hits.push(i);
  });
  return hits;
}

/** Lines sharing the most topic words with the memory (stemmed keywords), best first; lines sharing none are no evidence. */
function lexicalLines(lines: readonly string[], memory: string): number[] {
  const topic = new Set(keywords(memory).map(stem));
  if (topic.size === 0) return [];
  return lines
    .map((line, i) => ({
      i,
      score: new Set(
        keywords(line)
          .map(stem)
          .filter((w) => topic.has(w)),
      ).size,
    }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map((x) => x.i);
}

/**
 * The excerpt for one memory from its chunk: the lines the model quoted when
 * they are in the chunk, else the lines that best match the memory's words;
 * within DISTILL_EVIDENCE_MAX_CHARS, in the chunk's order; null when nothing
 * matches. Redacted again (a cut or re-joined line must not expose a secret
 * the first pass caught in context).
 */
export async function pickEvidence(chunk: string, memory: string, quotes: readonly string[]): Promise<string | null> {
  const lines = evidenceLines(chunk);
  // The chunk is redacted; a quote the model echoed a secret into would otherwise match nothing.
  const clean = await Promise.all(quotes.map(async (q) => (await redactSecrets(q)).text));
  const quoted = quotedLines(lines, clean);
  const order = quoted.length ? quoted : lexicalLines(lines, memory);
  const chosen: number[] = [];
  let used = 0;
  for (const i of order) {
    const cost = lines[i].length + 1;
    if (used + cost > DISTILL_EVIDENCE_MAX_CHARS) continue;
    chosen.push(i);
    used += cost;
  }
  if (chosen.length === 0) return null;
  const text = chosen
    .sort((a, b) => a - b)
    .map((i) => lines[i])
    .join("\n");
  const out = (await redactSecrets(text)).text;
  return out.length > DISTILL_EVIDENCE_MAX_CHARS ? out.slice(0, DISTILL_EVIDENCE_MAX_CHARS) : out;
}
