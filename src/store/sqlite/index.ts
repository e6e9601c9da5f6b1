export { openStore, getMeta, setMeta } from "./open";
export type { Store, Drizzle } from "./open";
export { memories, links, memoryTags, segments, memoryEvents, meta } from "./schema";
