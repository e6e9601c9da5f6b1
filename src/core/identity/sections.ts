import type { Services } from "../services";
import { agentDir, agentDirPresent, agentFolders, readScope, type Warn } from "./files";
import type { SectionStore } from "./store";
import { writeSections } from "./write";

/** The identity folder as a SectionStore: the home's files are the truth (the spec's layout). */
export function folderSections(root: string, warn: Warn): SectionStore {
  return {
    async readScope(agent) {
      return readScope(root, agent === null ? root : agentDir(root, agent), warn);
    },
    async agentScopes() {
      return agentFolders(root, warn);
    },
    async hasAgentScope(agent) {
      return agentDirPresent(root, agent);
    },
    async writeSections(agent, sections) {
      writeSections(root, agent === null ? root : agentDir(root, agent), sections);
    },
  };
}

/**
 * Where this server's identity sections live: the database when its engine
 * keeps them (PostgreSQL: shared by every server over it), else the home's
 * identity folder.
 */
export function sectionStore(s: Services, warn: Warn): SectionStore {
  return s.storage.identity.sections ?? folderSections(s.config.paths.identity, warn);
}
