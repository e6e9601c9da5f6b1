export { openStore, getMeta, setMeta } from "./open";
export type { Store } from "./open";
