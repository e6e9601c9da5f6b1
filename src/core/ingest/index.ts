// What other parts of memsvc use from ingest/: explicit named exports only.
export { ingestMemory, insertMemoryRows } from "./ingest";
