/**
 * Splitting a transcript into pieces that fit the model's context. Cuts fall
 * on message boundaries; only a single message longer than a whole chunk is
 * cut inside, at a paragraph, line or sentence end when there is one.
 */

export interface TranscriptMessage {
  role: string;
  content: string;
}

const SEPARATOR = "\n\n";

/** "user: ...", "assistant: ..."; text without a role stays as it is. */
export function renderMessage(m: TranscriptMessage): string {
  const role = m.role.trim();
  return role ? `${role}: ${m.content.trim()}` : m.content.trim();
}

/** Room for the transcript in one call: the context minus the prompt around it and the answer's share. */
export function chunkBudget(contextChars: number, overheadChars: number, answerShare: number, minChars: number): number {
  return Math.max(minChars, Math.floor(contextChars * (1 - answerShare)) - overheadChars);
}

/** Chunks of at most `maxChars` characters each, in transcript order; none empty. */
export function chunkTranscript(messages: readonly TranscriptMessage[], maxChars: number): string[] {
  if (!Number.isInteger(maxChars) || maxChars < 100) throw new Error(`chunk size must be an integer of at least 100, got ${maxChars}`);
  const chunks: string[] = [];
  let current = "";
  const flush = () => {
    if (current) chunks.push(current);
    current = "";
  };
  for (const m of messages) {
    if (m.content.trim() === "") continue;
    const block = renderMessage(m);
    if (block.length > maxChars) {
      flush();
      const role = m.role.trim();
      const prefix = role ? `${role}: ` : "";
      // Each piece keeps its speaker, so the model still knows who said it.
      for (const piece of splitText(m.content.trim(), maxChars - prefix.length)) chunks.push(prefix + piece);
      continue;
    }
    if (current && current.length + SEPARATOR.length + block.length > maxChars) flush();
    current = current ? current + SEPARATOR + block : block;
  }
  flush();
  return chunks;
}

/** Plain text: paragraphs are its "messages". */
export function chunkText(text: string, maxChars: number): string[] {
  return chunkTranscript(
    text.split(/\n\s*\n/).map((p) => ({ role: "", content: p })),
    maxChars,
  );
}

/** Cuts one long text into pieces of at most `max`, preferring natural breaks in the second half of each piece. */
export function splitText(text: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let cut = -1;
    for (const brk of ["\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " "]) {
      const at = window.lastIndexOf(brk);
      if (at >= max / 2) {
        cut = at + brk.length;
        break;
      }
    }
    if (cut <= 0) cut = max;
    // Never split a surrogate pair.
    if (cut < rest.length && /[\uD800-\uDBFF]/.test(rest[cut - 1])) cut--;
    const piece = rest.slice(0, cut).trim();
    if (piece) pieces.push(piece);
    rest = rest.slice(cut);
  }
  const tail = rest.trim();
  if (tail) pieces.push(tail);
  return pieces;
}
