import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { domainIndex, renderDomainIndex } from "../core/analytics";
import { hubs, neighbors, path } from "../core/graph";
import { hubsText, neighborsText, pathText } from "../core/graph";
import { memoryHistory, restoreVersion } from "../core/memories";
import { identityMarkdown } from "../core/identity";
import { listLearnings } from "../core/nightly";
import { deleteMemory, fetchMemory, ingestMemory, updateMemory } from "../core/memories";
import { recent } from "../core/search";
import { parseLimit, parseProject, search } from "../core/search";
import type { Services } from "../core/services";
import { DEFAULT_RECENT_LIMIT, DEFAULT_SEARCH_LIMIT, GRAPH_DEFAULT_LIMIT, LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX_DAYS, MAX_LIMIT } from "../core/tuning";
import { storageFailure } from "../store/failures";
import { AppError, invalid } from "../errors";
import { deleteText, errorText, historyText, learningsText, memoryText, recentText, searchText, updateText } from "./format";
import { counted } from "../core/text";

/**
 * The ten canonical memsvc_ tools, the memsvc_lessons alias, and
 * memsvc_history (an addition beyond the spec's ten: earlier versions of a
 * memory and their restore). Each calls
 * the core function its REST twin calls and renders the result as text.
 * Every failure becomes an isError result naming what to do next: the
 * session stays up.
 */

export const TOOL_NAMES = [
  "memsvc_search",
  "memsvc_get",
  "memsvc_recent",
  "memsvc_ingest",
  "memsvc_learnings",
  "memsvc_lessons",
  "memsvc_identity",
  "memsvc_index",
  "memsvc_graph",
  "memsvc_update",
  "memsvc_delete",
  "memsvc_history",
] as const;

const CITE = "Cite a memory you rely on as (memory <short_id>, <date>, from <source_agent>); results print that citation for each memory.";
const ID_HELP = "Memory id: the first 8 characters (as shown in results) or the full UUID.";

const text = (field: string, what: string) => z.string({ error: (i) => (i.input === undefined ? `${field} is required: ${what}` : `${field} must be a string`) }).describe(what);
const optText = (field: string, what: string) => z.string({ error: `${field} must be a string` }).optional().describe(what);
const count = (field: string, what: string, max = MAX_LIMIT) =>
  z
    .number({ error: `${field} must be a number` })
    .int({ error: `${field} must be a whole number` })
    .min(1, { error: `${field} must be at least 1` })
    .max(max, { error: `${field} must be at most ${max}` })
    .optional()
    .describe(what);
const memoryId = (field = "id") => text(field, ID_HELP);
const project = optText("project", "Project name; only memories of this project count.");

export function registerTools(server: McpServer, s: Services): void {
  const tool = <T extends z.ZodRawShape>(
    name: (typeof TOOL_NAMES)[number],
    description: string,
    shape: T,
    readOnly: boolean,
    run: (args: z.infer<z.ZodObject<T>>) => Promise<string> | string,
  ) => {
    server.registerTool(
      name,
      { description, inputSchema: z.strictObject(shape), annotations: { readOnlyHint: readOnly, destructiveHint: name === "memsvc_delete" || name === "memsvc_update", openWorldHint: false } },
      // A generic shape defeats the SDK's callback inference; the SDK has parsed args with this very schema.
      (async (args: z.infer<z.ZodObject<T>>) => guard(s, name, () => run(args))) as never,
    );
  };

  tool(
    "memsvc_search",
    `Search long-term memory for what earlier sessions learned, decided or experienced. Use it before starting work on a topic, when a question may have been met before, or when the user refers to past work. Hybrid search (keywords, meaning, and links between memories). Returns up to \`limit\` memories (default ${DEFAULT_SEARCH_LIMIT}), best first, each with its short id, content, score (0 to 1: how much of the query it answers, comparable across queries), effective strength, type, project and connection count. ${CITE}`,
    {
      query: text("query", "What to look for, in plain words."),
      limit: count("limit", `How many memories at most (default ${DEFAULT_SEARCH_LIMIT}).`),
      project,
      min_score: z
        .number({ error: "min_score must be a number from 0 to 1" })
        .min(0, { error: "min_score must be a number from 0 to 1" })
        .max(1, { error: "min_score must be a number from 0 to 1" })
        .optional()
        .describe("Leave out memories scoring below this (0 to 1; about 0.3 drops those sharing only a word or two with the query). Without it the best `limit` are returned, however weak."),
    },
    true,
    async (a) => searchText(await search(s, { query: a.query, limit: a.limit, project: a.project, min_score: a.min_score }), parseProject(a.project), a.min_score),
  );

  tool(
    "memsvc_get",
    `Load one memory in full by id (from a search, recent, recall or learnings result) when its content informs your work. Returns a provenance header (id, type, project, origin agent, date), the full content and the citation to use. Marks the memory as used, which strengthens it: call it for memories you actually rely on. ${CITE}`,
    { id: memoryId() },
    true,
    async (a) => memoryText(await fetchMemory(s, a.id)),
  );

  tool(
    "memsvc_recent",
    `List the most important recent memories without a query: ranked by strength, connections and recency. Use it at the start of work on a project to see what memory holds, or when you do not know what to search for. Returns up to \`limit\` memories (default ${DEFAULT_RECENT_LIMIT}) with scores and connection counts. ${CITE}`,
    { project, limit: count("limit", `How many memories at most (default ${DEFAULT_RECENT_LIMIT}).`) },
    true,
    async (a) => recentText(await recent(s, { project: a.project, limit: a.limit }), parseProject(a.project)),
  );

  tool(
    "memsvc_ingest",
    "Store one memory now: a durable fact, decision, experience or lesson worth knowing in a later session (sessions are also captured automatically; use this for something that must not be missed). Write it self-contained, in Markdown, without secrets. Returns a confirmation with the new memory's id.",
    {
      content: text("content", "The memory, self-contained Markdown."),
      project: optText("project", "Project the memory belongs to."),
      memory_type: optText("memory_type", "knowledge, experience, decisions or learnings (legacy: fact, episode, decision, lesson). Default experience."),
    },
    false,
    async (a) => {
      const r = await ingestMemory(s, { content: a.content, project: a.project, memory_type: a.memory_type, source_agent: clientName(server) });
      return r.id === null ? `Not stored: this session already has ${counted(r.existing_count, "memory", "memories")}.` : `${r.message}\nid: ${r.id}`;
    },
  );

  const learningsShape = {
    days: count("days", `Look-back in days (default ${LEARNINGS_DEFAULT_DAYS}).`, LEARNINGS_MAX_DAYS),
    project: optText("project", "Project name; that project's learnings plus the global ones."),
  };
  const learningsRun = async (a: { days?: number; project?: string }) => {
    const list = await listLearnings(s, { days: a.days, project: a.project });
    return learningsText(list, parseLimit(a.days, LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX_DAYS, "days"), parseProject(a.project));
  };
  const learningsAbout = `Actionable lessons drawn nightly from past successes and failures (learnings-type memories), strongest first. Use it at the start of a task to avoid repeating mistakes. Returns each learning with its short id, content, project, date, strength, tags and the memories it came from, for the last \`days\` days (default ${LEARNINGS_DEFAULT_DAYS}). ${CITE}`;
  tool("memsvc_learnings", learningsAbout, learningsShape, true, learningsRun);
  tool("memsvc_lessons", `Alias of memsvc_learnings (its earlier name); same parameters and result. ${learningsAbout}`, learningsShape, true, learningsRun);

  tool(
    "memsvc_identity",
    'The identity layer: hand-written sections on who the agent is and how it should work (plus the memory instructions section). Read it when you need those instructions. Returns the sections as Markdown, each under a "### <name>" heading, or exactly "No identity sections configured." when there are none.',
    { name: optText("name", "One section's name (e.g. soul, memory); omit for all sections.") },
    true,
    (a) => identityMarkdown(s, a.name),
  );

  tool(
    "memsvc_index",
    "The map of what memory holds: each knowledge domain with its memory and learnings counts, project groupings and characteristic keywords, then each project with its main domains. Use it to see which topics exist before searching, or to choose a domain for memsvc_graph hubs.",
    {},
    true,
    async () => renderDomainIndex(await domainIndex(s)),
  );

  tool(
    "memsvc_graph",
    `Explore links between memories. operation "neighbors" (needs id): the memories linked to one memory, with relationships and weights. operation "hubs": the most connected memories (optionally in one domain, see memsvc_index). operation "path" (needs id and target_id): the shortest chain of links between two memories. Returns one line per memory with its short id (load one with memsvc_get). limit defaults to ${GRAPH_DEFAULT_LIMIT}.`,
    {
      operation: z
        .enum(["neighbors", "hubs", "path"], {
          error: (i) => `operation ${i.input === undefined ? "is required" : `must be one of "neighbors", "hubs", "path", got ${JSON.stringify(i.input).slice(0, 40)}`}: neighbors (needs id), hubs, or path (needs id and target_id)`,
        }).describe("neighbors, hubs or path."),
      id: optText("id", `${ID_HELP} Required for neighbors and path.`),
      target_id: optText("target_id", "The other end of the path (8-character prefix or full UUID). Required for path."),
      limit: count("limit", `How many memories at most for neighbors and hubs (default ${GRAPH_DEFAULT_LIMIT}).`),
      domain: optText("domain", "Only hubs whose primary domain is this (hubs only)."),
    },
    true,
    async (a) => {
      const op = a.operation;
      const misplaced = (["id", "target_id", "limit", "domain"] as const).filter((k) => a[k] !== undefined && !GRAPH_PARAMS[op].includes(k));
      if (misplaced.length) throw invalid(`${misplaced.join(", ")} do${misplaced.length === 1 ? "es" : ""} not apply to operation "${op}"; it takes ${GRAPH_PARAMS[op].join(", ") || "no other parameter"}`);
      if ((op === "neighbors" || op === "path") && a.id === undefined) throw invalid(`operation "${op}" needs id: ${op === "path" ? "the memory the path starts from" : "the memory whose links to list"} (8-character prefix or full UUID)`);
      if (op === "path" && a.target_id === undefined) throw invalid('operation "path" needs target_id: the memory the path ends at (8-character prefix or full UUID)');
      if (op === "neighbors") return neighborsText(await neighbors(s, { id: a.id, limit: a.limit ?? GRAPH_DEFAULT_LIMIT }));
      if (op === "hubs") return hubsText(await hubs(s, { limit: a.limit ?? GRAPH_DEFAULT_LIMIT, domain: a.domain }));
      return pathText(await path(s, { id: a.id, target_id: a.target_id }));
    },
  );

  tool(
    "memsvc_update",
    `Correct a memory that is wrong or outdated: change its content, project and/or memory_type (give at least one). A content change recomputes its embedding. Returns the changed fields, each before and after. ${ID_HELP}`,
    {
      id: memoryId(),
      content: optText("content", "New full content (Markdown); replaces the old text."),
      project: optText("project", "New project name."),
      memory_type: optText("memory_type", "New type: knowledge, experience, decisions or learnings."),
    },
    false,
    async (a) => updateText(await updateMemory(s, { id: a.id, content: a.content, project: a.project, memory_type: a.memory_type })),
  );

  tool(
    "memsvc_delete",
    `Permanently delete a memory that is wrong, duplicated or must not be kept, together with its embedding and all its links. Cannot be undone; prefer memsvc_update to correct one. Returns a confirmation with a preview of the deleted content. ${ID_HELP}`,
    { id: memoryId() },
    false,
    async (a) => deleteText(await deleteMemory(s, a.id)),
  );

  tool(
    "memsvc_history",
    `Earlier versions of a memory: what memsvc_update, a restore, a later session restating or correcting it, or the nightly merge of a near-duplicate replaced (newest first, the last 20 kept). Use it when a memory looks wrong after a change, to see what it said before. With \`restore\` (a version number from the list), that version becomes the memory's content again; the text it replaces is kept as a new version, so a restore can be undone. ${ID_HELP}`,
    {
      id: memoryId(),
      restore: count("restore", "A version number from this tool's list: make that version current again.", Number.MAX_SAFE_INTEGER),
    },
    false,
    async (a) => {
      if (a.restore === undefined) return historyText(await memoryHistory(s, a.id));
      const r = await restoreVersion(s, { id: a.id, version: a.restore });
      return `Restored version ${r.restored_version}.\n${updateText(r)}`;
    },
  );
}

const GRAPH_PARAMS: Record<"neighbors" | "hubs" | "path", readonly string[]> = {
  neighbors: ["id", "limit"],
  hubs: ["limit", "domain"],
  path: ["id", "target_id"],
};

/** The connecting client's name (e.g. claude-code) is the provenance of what it stores. */
function clientName(server: McpServer): string | undefined {
  const name = server.server.getClientVersion()?.name?.trim();
  return name ? name.slice(0, 200) : undefined;
}

async function guard(s: Services, name: string, run: () => Promise<string> | string): Promise<CallToolResult> {
  try {
    return { content: [{ type: "text", text: await run() }] };
  } catch (e) {
    if (e instanceof AppError) return { isError: true, content: [{ type: "text", text: errorText(e) }] };
    const storage = storageFailure(e);
    if (storage) {
      s.log("error", `tool ${name}: ${storage.message}`);
      return { isError: true, content: [{ type: "text", text: storage.message }] };
    }
    const ref = crypto.randomUUID().slice(0, 8);
    s.log("error", `tool ${name} failed (reference ${ref})`, { error: String((e as Error)?.stack ?? e) });
    return { isError: true, content: [{ type: "text", text: `internal error in ${name} (reference ${ref}); the server log has details. Other tools still work.` }] };
  }
}
