import type { Services } from "../services";

/** A domain tag and its association weight (higher = more central to the memory). */
export interface Tag {
  tag: string;
  weight: number;
}

export const MAX_TAGS = 8;
/** Primary domain of a memory with neither project nor tags. */
export const DEFAULT_DOMAIN = "general";

/** Lower-case, words joined by "-", at most 40 characters; "" when nothing usable is left. */
export function normalizeTag(raw: string): string {
  return raw
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
}

/**
 * Domain tags of a memory: its project first (weight 1), then the tags the
 * language model named, in order, with falling weights. The first is the
 * primary domain.
 */
export function deriveTags(project: string | null, modelTags: readonly string[] = []): Tag[] {
  const out: Tag[] = [];
  const seen = new Set<string>();
  const push = (raw: string, weight: number) => {
    const tag = normalizeTag(raw);
    if (!tag || seen.has(tag) || out.length >= MAX_TAGS) return;
    seen.add(tag);
    out.push({ tag, weight: Math.round(weight * 1000) / 1000 });
  };
  if (project) push(project, 1);
  modelTags.forEach((t, i) => {
    push(t, Math.max(0.2, 0.8 - i * 0.1));
  });
  if (out.length === 0) push(DEFAULT_DOMAIN, 1);
  return out;
}

/** Replaces the tags of one memory; inside a write's transaction, `s` is withStorage(s, tx). */
export function writeTags(s: Services, memoryId: string, tags: readonly Tag[]): Promise<void> {
  return s.storage.memories.writeTags(memoryId, tags);
}

/** Tags of many memories, each list ordered by weight (strongest first). */
export async function tagsOf(s: Services, memoryIds: readonly string[]): Promise<Map<string, Tag[]>> {
  const out = new Map<string, Tag[]>();
  if (memoryIds.length === 0) return out;
  for (const r of await s.storage.memories.tagsOf(memoryIds)) {
    const list = out.get(r.memoryId) ?? [];
    list.push({ tag: r.tag, weight: r.weight });
    out.set(r.memoryId, list);
  }
  return out;
}
