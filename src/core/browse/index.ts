// What other parts of memsvc use from browse/ (the memory browser's list, filters and bulk delete): explicit named exports only.
export { countSelection, deleteSelection, listFacets, listMemories } from "./list";
