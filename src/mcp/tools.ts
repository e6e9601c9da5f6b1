import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Static, TObject } from "@sinclair/typebox";
import { IndexInput } from "../core/analytics/schema";
import { GraphTool } from "../core/graph/schema";
import { IdentityTool } from "../core/identity/schema";
import { DeleteInput, HistoryTool, IngestTool, MemoryGetTool, UpdateInput } from "../core/memories/schema";
import { LearningsInput } from "../core/nightly/schema";
import { RecentInput, SearchInput } from "../core/search/schema";
import { checkInput } from "../core/validate";
import { ID_HELP } from "../core/fields";
import { domainIndex, renderDomainIndex } from "../core/analytics";
import { hubs, neighbors, path } from "../core/graph";
import { hubsText, neighborsText, pathText } from "../core/graph";
import { memoryHistory, restoreVersion } from "../core/memories";
import { identityMarkdown } from "../core/identity";
import { listLearnings } from "../core/nightly";
import { deleteMemory, fetchMemory, updateMemory } from "../core/memories";
import { ingestMemory } from "../core/ingest";
import { recent } from "../core/search";
import { parseLimit, parseProject } from "../core/search";
import { feedbackFromAnywhere, searchWithReceipt } from "../core/receipts";
import { FeedbackInput } from "../core/receipts/schema";
import type { Services } from "../core/services";
import { DEFAULT_RECENT_LIMIT, DEFAULT_SEARCH_LIMIT } from "../core/search/tuning";
import { GRAPH_DEFAULT_LIMIT } from "../core/graph/tuning";
import { LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX_DAYS } from "../core/nightly/tuning";
import { storageFailure } from "../store/failures";
import { AppError, invalid } from "../errors";
import { deleteText, errorText, historyText, learningsText, memoryText, recentText, searchText, updateText } from "./format";
import { counted } from "../core/text";
import { auditLog } from "../core/audit";
import { BYPASS_PRINCIPAL, checkMemoryInScope, creatorOf, roleAtLeast, scopedProject, type Principal } from "../core/tokens";

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
  "memsvc_feedback",
] as const;

const CITE = "Cite a memory you rely on as (memory <short_id>, <date>, from <source_agent>); results print that citation for each memory.";

interface ToolDef {
  description: string;
  schema: TObject;
  readOnly: boolean;
  run: (args: never, call: ToolCall) => Promise<string> | string;
}

/** What a tool knows of its call besides the arguments. */
interface ToolCall {
  /** The MCP transport's session (Streamable HTTP's Mcp-Session-Id, SSE's sessionId; the stdio bridge's HTTP session): receipts name it. */
  sessionId: string | null;
}

/**
 * Registers the tools on a low-level MCP Server: tools/list answers each
 * tool's input schema as it is (the operation's TypeBox schema from
 * core/<capability>/schema.ts, which is JSON Schema), and tools/call checks
 * arguments with the same schema and message rules as REST (core/validate.ts).
 */
export function registerTools(server: Server, s: Services, who: Principal = BYPASS_PRINCIPAL): void {
  const tools = new Map<string, ToolDef>();
  const audit = (action: string, target: string, detail: string | null = null) =>
    auditLog(s).record({ actor: who.name, action, target, detail: detail ?? JSON.stringify({ via: "mcp" }), peer: null });
  const tool = <T extends TObject>(
    name: (typeof TOOL_NAMES)[number],
    description: string,
    schema: T,
    readOnly: boolean,
    run: (args: Static<T>, call: ToolCall) => Promise<string> | string,
  ) => {
    tools.set(name, { description, schema, readOnly, run: run as ToolDef["run"] });
  };
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...tools].map(([name, t]) => ({
      name,
      description: t.description,
      inputSchema: JSON.parse(JSON.stringify(t.schema)),
      annotations: { readOnlyHint: t.readOnly, destructiveHint: name === "memsvc_delete" || name === "memsvc_update", openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const t = tools.get(name);
    if (!t) return { isError: true, content: [{ type: "text", text: new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`).message }] };
    let checked: unknown;
    try {
      checked = checkInput(t.schema, args ?? {});
    } catch (e) {
      return { isError: true, content: [{ type: "text", text: `Input validation error: Invalid arguments for tool ${name}: ${(e as Error).message}` }] };
    }
    return guard(s, name, () => {
      // The session's principal (its opener's token): a reader calls read-only tools only.
      const need = t.readOnly || (name === "memsvc_history" && (checked as { restore?: unknown }).restore === undefined) ? "reader" : "writer";
      if (!roleAtLeast(who.role, need)) throw new AppError("forbidden", `${name} needs the ${need} role; token ${who.name} is a ${who.role}`);
      return t.run(checked as never, { sessionId: extra.sessionId ?? null });
    });
  });

  tool(
    "memsvc_search",
    `Search long-term memory for what earlier sessions learned, decided or experienced. Use it before starting work on a topic, when a question may have been met before, or when the user refers to past work. Hybrid search (keywords, meaning, and links between memories). Returns up to \`limit\` memories (default ${DEFAULT_SEARCH_LIMIT}), best first, each with its short id, content, score (0 to 1: how much of the query it answers, comparable across queries), effective strength, type, project and connection count. ${CITE}`,
    SearchInput,
    true,
    async (a, call) => {
      const project = scopedProject(who, a.project) ?? undefined;
      return searchText(
        await searchWithReceipt(
          s,
          { query: a.query, limit: a.limit, project, min_score: a.min_score },
          { via: "mcp", agent: clientName(server) ?? null, sessionId: call.sessionId },
        ),
        parseProject(project),
        a.min_score,
      );
    },
  );

  tool(
    "memsvc_get",
    `Load one memory in full by id (from a search, recent, recall or learnings result) when its content informs your work. Returns a provenance header (id, type, project, origin agent, date), the full content and the citation to use. Marks the memory as used, which strengthens it: call it for memories you actually rely on. ${CITE}`,
    MemoryGetTool,
    true,
    async (a) => (await checkMemoryInScope(s, who, a.id), memoryText(await fetchMemory(s, a.id))),
  );

  tool(
    "memsvc_recent",
    `List the most important recent memories without a query: ranked by strength, connections and recency. Use it at the start of work on a project to see what memory holds, or when you do not know what to search for. Returns up to \`limit\` memories (default ${DEFAULT_RECENT_LIMIT}) with scores and connection counts. ${CITE}`,
    RecentInput,
    true,
    async (a) => {
      const project = scopedProject(who, a.project) ?? undefined;
      return recentText(await recent(s, { project, limit: a.limit }), parseProject(project));
    },
  );

  tool(
    "memsvc_ingest",
    "Store one memory now: a durable fact, decision, experience or lesson worth knowing in a later session (sessions are also captured automatically; use this for something that must not be missed). Write it self-contained, in Markdown, without secrets. Returns a confirmation with the new memory's id.",
    IngestTool,
    false,
    async (a) => {
      const r = await ingestMemory(
        s,
        { content: a.content, project: scopedProject(who, a.project), memory_type: a.memory_type, source_agent: clientName(server) },
        { createdBy: creatorOf(who) },
      );
      if (r.id !== null) audit("memory.created", r.id);
      return r.id === null ? `Not stored: this session already has ${counted(r.existing_count, "memory", "memories")}.` : `${r.message}\nid: ${r.id}`;
    },
  );

  const learningsRun = async (a: { days?: number; project?: string }) => {
    const project = scopedProject(who, a.project) ?? undefined;
    const list = await listLearnings(s, { days: a.days, project });
    return learningsText(list, parseLimit(a.days, LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX_DAYS, "days"), parseProject(project));
  };
  const learningsAbout = `Actionable lessons drawn nightly from past successes and failures (learnings-type memories), strongest first. Use it at the start of a task to avoid repeating mistakes. Returns each learning with its short id, content, project, date, strength, tags and the memories it came from, for the last \`days\` days (default ${LEARNINGS_DEFAULT_DAYS}). ${CITE}`;
  tool("memsvc_learnings", learningsAbout, LearningsInput, true, learningsRun);
  tool("memsvc_lessons", `Alias of memsvc_learnings (its earlier name); same parameters and result. ${learningsAbout}`, LearningsInput, true, learningsRun);

  tool(
    "memsvc_identity",
    'The identity layer: hand-written sections on who the agent is and how it should work (plus the memory instructions section). Read it when you need those instructions. Returns the sections as Markdown, each under a "### <name>" heading, or exactly "No identity sections configured." when there are none.',
    IdentityTool,
    true,
    (a) => identityMarkdown(s, a.name),
  );

  tool(
    "memsvc_index",
    "The map of what memory holds: each knowledge domain with its memory and learnings counts, project groupings and characteristic keywords, then each project with its main domains. Use it to see which topics exist before searching, or to choose a domain for memsvc_graph hubs.",
    IndexInput,
    true,
    async () => renderDomainIndex(await domainIndex(s, who.projects)),
  );

  tool(
    "memsvc_graph",
    `Explore links between memories. operation "neighbors" (needs id): the memories linked to one memory, with relationships and weights. operation "hubs": the most connected memories (optionally in one domain, see memsvc_index). operation "path" (needs id and target_id): the shortest chain of links between two memories. Returns one line per memory with its short id (load one with memsvc_get). limit defaults to ${GRAPH_DEFAULT_LIMIT}.`,
    GraphTool,
    true,
    async (a) => {
      const op = a.operation as keyof typeof GRAPH_PARAMS; // the schema's pattern admits only these
      const misplaced = (["id", "target_id", "limit", "domain"] as const).filter((k) => a[k] !== undefined && !GRAPH_PARAMS[op].includes(k));
      if (misplaced.length)
        throw invalid(
          `${misplaced.join(", ")} do${misplaced.length === 1 ? "es" : ""} not apply to operation "${op}"; it takes ${GRAPH_PARAMS[op].join(", ") || "no other parameter"}`,
        );
      if ((op === "neighbors" || op === "path") && a.id === undefined)
        throw invalid(
          `operation "${op}" needs id: ${op === "path" ? "the memory the path starts from" : "the memory whose links to list"} (8-character prefix or full UUID)`,
        );
      if (op === "path" && a.target_id === undefined)
        throw invalid('operation "path" needs target_id: the memory the path ends at (8-character prefix or full UUID)');
      if (op === "neighbors") return neighborsText(await neighbors(s, { id: a.id, limit: a.limit ?? GRAPH_DEFAULT_LIMIT }, who.projects));
      if (op === "hubs") return hubsText(await hubs(s, { limit: a.limit ?? GRAPH_DEFAULT_LIMIT, domain: a.domain }, who.projects));
      return pathText(await path(s, { id: a.id, target_id: a.target_id }, who.projects));
    },
  );

  tool(
    "memsvc_update",
    `Correct a memory that is wrong or outdated: change its content, project and/or memory_type (give at least one). A content change recomputes its embedding. Returns the changed fields, each before and after. ${ID_HELP}`,
    UpdateInput,
    false,
    async (a) => {
      await checkMemoryInScope(s, who, a.id);
      if (a.project !== undefined) scopedProject(who, a.project ?? "");
      const r = await updateMemory(s, { id: a.id, content: a.content, project: a.project, memory_type: a.memory_type });
      audit("memory.changed", r.memory.id);
      return updateText(r);
    },
  );

  tool(
    "memsvc_delete",
    `Permanently delete a memory that is wrong, duplicated or must not be kept, together with its embedding and all its links. Cannot be undone; prefer memsvc_update to correct one. Returns a confirmation with a preview of the deleted content. ${ID_HELP}`,
    DeleteInput,
    false,
    async (a) => {
      await checkMemoryInScope(s, who, a.id);
      const r = await deleteMemory(s, a.id);
      audit("memory.deleted", r.id);
      return deleteText(r);
    },
  );

  tool(
    "memsvc_history",
    `Earlier versions of a memory: what memsvc_update, a restore, a later session restating or correcting it, or the nightly merge of a near-duplicate replaced (newest first, the last 20 kept). Use it when a memory looks wrong after a change, to see what it said before. With \`restore\` (a version number from the list), that version becomes the memory's content again; the text it replaces is kept as a new version, so a restore can be undone. ${ID_HELP}`,
    HistoryTool,
    false,
    async (a) => {
      await checkMemoryInScope(s, who, a.id);
      if (a.restore === undefined) return historyText(await memoryHistory(s, a.id));
      const r = await restoreVersion(s, { id: a.id, version: a.restore });
      audit("memory.restored", r.memory.id, JSON.stringify({ version: a.restore }));
      return `Restored version ${r.restored_version}.\n${updateText(r)}`;
    },
  );

  tool(
    "memsvc_feedback",
    `Report a memory that misled you or helped you, so the next prompts go better: kind "wrong" (it is false: it leaves recall at once and is marked for the user's review), "outdated" (it was true once: it is marked possibly outdated, with your note), "irrelevant" (it keeps being recalled for prompts like the current one but is not about them: demoted for such prompts only), "useful" (it helped: counts as a use). Give a short note saying what is wrong or outdated. Correct the content with memsvc_update when you know the right text. Returns what changes. ${ID_HELP}`,
    FeedbackInput,
    false,
    async (a) => {
      await checkMemoryInScope(s, who, a.id);
      const r = await feedbackFromAnywhere(s, a, "mcp");
      audit("memory.changed", r.id, JSON.stringify({ via: "mcp", feedback: r.kind }));
      return `Feedback recorded: memory ${r.short_id} ${r.kind}. ${r.effect[0].toUpperCase()}${r.effect.slice(1)}.`;
    },
  );
}

const GRAPH_PARAMS: Record<"neighbors" | "hubs" | "path", readonly string[]> = {
  neighbors: ["id", "limit"],
  hubs: ["limit", "domain"],
  path: ["id", "target_id"],
};

/** The connecting client's name (e.g. claude-code) is the provenance of what it stores. */
function clientName(server: Server): string | undefined {
  const name = server.getClientVersion()?.name?.trim();
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
    return {
      isError: true,
      content: [{ type: "text", text: `internal error in ${name} (reference ${ref}); the server log has details. Other tools still work.` }],
    };
  }
}
