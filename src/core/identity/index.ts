// What other parts of memsvc use from identity/: explicit named exports only.
export { agentDir, agentFolders, isValidName, readScope } from "./files";
export { agentView, getIdentity, globalView, identityForClient, identityMarkdown, knownAgents, parseIdentityQuery, putIdentity, resolveMode } from "./identity";
export type { AgentIdentityView, IdentityView } from "./identity";
export { inlineMarkdown } from "./inline-md";
export { memoryInstructions } from "./memory-section";
export { recoverFolder, recoverIdentity, writeSections } from "./write";
export { folderSections, sectionStore } from "./sections";
export type { IdentityStore, StoredSection } from "./store";
