import { keywords } from "../text";
import { SUBSTANCE_MAX_NOISE_SHARE, SUBSTANCE_MIN_CHARS, SUBSTANCE_MIN_KEYWORDS } from "./tuning";

/**
 * The substance gate: a distilled fragment must carry a fact someone could
 * use later. Conversation glue ("ok", "let me check") and pasted tool output
 * are what models emit when a transcript had nothing worth keeping.
 */

export type DropReason = "empty" | "filler" | "too short" | "tool noise" | "too long" | "not a memory";

/** One fragment the distiller rejected, as listed in the /distill `dropped` array. */
export interface Dropped {
  content: string;
  reason: DropReason;
}

// Phrases that carry no fact on their own, longest first so "thank you" wins over "thank".
const FILLER = [
  "you're welcome",
  "you are welcome",
  "no problem",
  "sounds good",
  "looks good",
  "makes sense",
  "thank you",
  "let me check",
  "let me look",
  "let me see",
  "let me try",
  "let me think",
  "let me know",
  "i will check",
  "i'll check",
  "i'll look",
  "looking into it",
  "working on it",
  "one moment",
  "one sec",
  "go ahead",
  "will do",
  "got it",
  "on it",
  "thanks",
  "thx",
  "ty",
  "ok",
  "okay",
  "k",
  "sure",
  "yes",
  "yep",
  "yeah",
  "no",
  "nope",
  "great",
  "perfect",
  "cool",
  "nice",
  "done",
  "hmm",
  "right",
  "alright",
  "continue",
  "proceed",
  "good",
  "lgtm",
  "noted",
  "understood",
  "np",
  "hello",
  "hi",
  "hey",
  "bye",
  "checking",
].sort((a, b) => b.length - a.length);
const FILLER_RE = new RegExp(`\\b(?:${FILLER.map((f) => f.replace(/'/g, "'?")).join("|")})\\b`, "g");

// Lines that are machine output rather than anybody's words.
const NOISE_LINE: RegExp[] = [
  /^\s*[[{}\]]/, // JSON and bracketed tool markers
  /^\s*(?:\$|>|#!|PS [A-Z]:\\)\s/, // shell prompts
  /^\s*at\s+\S+\s*\(?[^)]*:\d+:\d+\)?\s*$/, // stack frames
  /^\s*(?:diff --git|index [0-9a-f]+\.\.|@@ |\+\+\+ |--- )/, // diffs
  /^\s*(?:exit code|exit status|command failed|error: process)\b/i,
  /^\s*(?:\/|~\/|\.\/|[A-Za-z]:\\)\S*\s*$/, // a bare path
  /^\s*\d+[:\s→|]/, // numbered file listing (cat -n, Read tool)
  /^\s*(?:drwx|-rw)[-rwx]+/, // ls -l
  /^\s*(?=\S*\d)\S{24,}\s*$/, // one long token with digits: a hash, id or base64 blob
];

function isNoiseLine(line: string): boolean {
  const t = line.trim();
  if (t === "") return false;
  if (NOISE_LINE.some((re) => re.test(t))) return true;
  const letters = (t.match(/\p{L}/gu) ?? []).length;
  // Hashes, base64, minified code: few letters among many characters.
  return t.length >= 12 && letters / t.length < 0.45;
}

/** Why a fragment carries no fact, or null when it passes. */
export function substanceReason(raw: string): DropReason | null {
  const content = raw.trim();
  if (content === "" || !/[\p{L}\p{N}]/u.test(content)) return "empty";
  const words = keywords(content);
  const lower = content.toLowerCase().replace(/[’`]/g, "'");
  const residue = keywords(lower.replace(FILLER_RE, " "));
  const lines = content.split("\n").filter((l) => l.trim() !== "");
  const noise = lines.filter(isNoiseLine);
  const noiseChars = noise.reduce((n, l) => n + l.length, 0);
  const totalChars = lines.reduce((n, l) => n + l.length, 0);
  if (noise.length > 0 && noiseChars / totalChars > SUBSTANCE_MAX_NOISE_SHARE) {
    const prose = lines.filter((l) => !isNoiseLine(l)).join(" ");
    if (keywords(prose).length < SUBSTANCE_MIN_KEYWORDS * 2) return "tool noise";
  }
  if (content.length < 80 && residue.length <= 1) return "filler";
  if (content.length < SUBSTANCE_MIN_CHARS || words.length < SUBSTANCE_MIN_KEYWORDS) return "too short";
  return null;
}

/** Splits fragments into those that pass and those dropped, with their reason. */
export function substanceGate<T extends { content: string }>(items: readonly T[]): { kept: T[]; dropped: Dropped[] } {
  const kept: T[] = [];
  const dropped: Dropped[] = [];
  for (const item of items) {
    const reason = substanceReason(item.content);
    if (reason) dropped.push({ content: item.content, reason });
    else kept.push(item);
  }
  return { kept, dropped };
}
