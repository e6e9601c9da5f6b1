import type { IdentityMode } from "../../config";
import type { IdentityPutInput, IdentityQuery as SchemaQuery } from "./schema";
import { invalid, notFound, reserved, conflict } from "../../errors";
import { isValidName, NAME_MAX, NAME_PATTERN } from "./files";
import { sectionStore } from "./sections";
import type { SectionStore } from "./store";
import { MEMORY_SECTION, memoryInstructions } from "./memory-section";
import type { Services } from "../services";
import { IDENTITY_SECTION_MAX_BYTES } from "./tuning";
import { plural } from "../text";

/**
 * The identity layer: hand-edited Markdown sections (who the agent is, how it
 * works) kept as files (in the database on PostgreSQL: see store.ts), never
 * distilled, scored or decayed. A scope is global
 * or one agent's; the agent's mode decides what it sees:
 *   global   - the global sections;
 *   override - the global sections, each replaced by the agent's file of the same name;
 *   off      - no hand-edited sections at all.
 * The synthetic `memory` section (product-owned recall/citation/capture
 * instructions) is added in every mode, `off` included: `off` silences the
 * user's identity for that agent, but the agent still receives recall blocks
 * and must still cite correctly. Only `memoryInstructions: false` removes it.
 */

export type Origin = "global" | "agent";

export interface IdentityView {
  sections: Record<string, string>;
  updated_at: string | null;
  clients: string[];
  agents: Record<string, IdentityMode>;
}

export interface AgentIdentityView {
  sections: Record<string, string>;
  updated_at: string | null;
  clients: string[];
  agent: string;
  mode: IdentityMode;
  /** Override mode only: where each section came from (the synthetic `memory` counts as global). */
  origins?: Record<string, Origin>;
}

/** Body of a successful PUT: what was written and the scope's state afterwards. */
export interface PutResult {
  ok: true;
  /** Section names written, sorted. */
  written: string[];
  /** updated_at of the written scope as a GET of it would now report. */
  updated_at: string | null;
  /** Present when the PUT targeted an agent scope. */
  agent?: string;
  mode?: IdentityMode;
}

/** The query as the edge typed it (schema.ts), or as sent when the legacy parameters are checked. */
export type IdentityQuery = SchemaQuery & { project?: string; limit?: string; privacy?: string };

interface Section {
  body: string;
  mtimeMs: number | null;
  origin: Origin;
}

const warned = new Set<string>();
function warnOnce(s: Services, message: string): void {
  // GET runs on every page load and session start: say each problem once per process.
  if (warned.has(message) || warned.size > 1000) return;
  warned.add(message);
  s.log("warn", message);
}

const nameRule = `${NAME_PATTERN.source}, at most ${NAME_MAX} characters`;

/** identityClients as configured, trimmed, lower-cased and without duplicates. */
export function resolvedClients(s: Services): string[] {
  return [...new Set(s.config.identityClients.map((c) => c.trim().toLowerCase()).filter((c) => c.length > 0))];
}

const sections = (s: Services): SectionStore => sectionStore(s, (m) => warnOnce(s, m));

/** Mode of one agent: identityAgents config, then presence of its own scope (agents/<id>/), then global. */
export async function resolveMode(s: Services, agent: string): Promise<IdentityMode> {
  const configured = Object.hasOwn(s.config.identityAgents, agent) ? s.config.identityAgents[agent] : undefined;
  if (configured) return configured;
  return (await sections(s).hasAgentScope(agent)) ? "override" : "global";
}

/** Every agent id the server knows of (config identityAgents and agent scopes) with its mode. */
export async function knownAgents(s: Services): Promise<Record<string, IdentityMode>> {
  const ids = new Set([...Object.keys(s.config.identityAgents), ...(await sections(s).agentScopes())]);
  const out: Record<string, IdentityMode> = {};
  for (const id of [...ids].sort()) out[id] = await resolveMode(s, id);
  return out;
}

function checkAgent(agent: unknown): string {
  if (!isValidName(agent)) throw invalid(`invalid agent id ${JSON.stringify(agent)}: agent ids match ${nameRule}`, { agent });
  return agent;
}

/** Validates the query of either verb; returns the agent scope or null for global. */
export function parseIdentityQuery(query: IdentityQuery, verb: "GET" | "PUT"): string | null {
  const legacy = (["project", "limit", "privacy"] as const).filter((k) => query[k] !== undefined);
  if (legacy.length > 0) {
    throw invalid(
      verb === "GET"
        ? `GET /identity takes no ${legacy.join(", ")}: it returns the identity sections. Recent memories (the old GET /context) are at GET /recent?project=<name>&limit=<n>`
        : `PUT /identity takes only ?agent=<id>; ${legacy.join(", ")} belong to memories (see /recent and /ingest)`,
      { parameters: legacy },
    );
  }
  return query.agent === undefined ? null : checkAgent(query.agent);
}

async function filesOf(s: Services, agent: string | null, origin: Origin): Promise<Map<string, Section>> {
  const out = new Map<string, Section>();
  for (const [name, f] of await sections(s).readScope(agent)) if (name !== MEMORY_SECTION) out.set(name, { body: f.body, mtimeMs: f.mtimeMs, origin });
  return out;
}

/** The sections one scope sees, sorted by name with the synthetic `memory` last. */
async function scopeSections(s: Services, agent: string | null, mode: IdentityMode): Promise<Map<string, Section>> {
  let merged = new Map<string, Section>();
  if (mode !== "off") merged = await filesOf(s, null, "global");
  if (agent !== null && mode === "override") {
    for (const [name, sec] of await filesOf(s, agent, "agent")) merged.set(name, sec);
    merged = new Map([...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
  if (s.config.memoryInstructions) merged.set(MEMORY_SECTION, { body: memoryInstructions(), mtimeMs: null, origin: "global" });
  return merged;
}

function newest(sections: Map<string, Section>): string | null {
  let max: number | null = null;
  for (const sec of sections.values()) if (sec.mtimeMs !== null && (max === null || sec.mtimeMs > max)) max = sec.mtimeMs;
  return max === null ? null : new Date(max).toISOString();
}

function bodies(sections: Map<string, Section>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, sec] of sections) out[name] = sec.body;
  return out;
}

/** GET /identity (and /context): the global scope, or with an agent the merged view of that agent. */
export async function getIdentity(s: Services, query: IdentityQuery = {}): Promise<IdentityView | AgentIdentityView> {
  const agent = parseIdentityQuery(query, "GET");
  return agent === null ? globalView(s) : agentView(s, agent);
}

export async function globalView(s: Services): Promise<IdentityView> {
  const scope = await scopeSections(s, null, "global");
  return { sections: bodies(scope), updated_at: newest(scope), clients: resolvedClients(s), agents: await knownAgents(s) };
}

export async function agentView(s: Services, agent: string): Promise<AgentIdentityView> {
  checkAgent(agent);
  const mode = await resolveMode(s, agent);
  const scope = await scopeSections(s, agent, mode);
  const view: AgentIdentityView = { sections: bodies(scope), updated_at: newest(scope), clients: resolvedClients(s), agent, mode };
  if (mode === "override") {
    view.origins = {};
    for (const [name, sec] of scope) view.origins[name] = sec.origin;
  }
  return view;
}

/** Checks a PUT body completely before anything touches the disk. */
export function parseSections(body: unknown): [string, string][] {
  const shape = 'the body must be {"sections": {"<name>": "<markdown>", ...}}';
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid(shape);
  const extra = Object.keys(body).filter((k) => k !== "sections");
  if (extra.length > 0)
    throw invalid(`unknown ${plural(extra.length, "field")} ${extra.join(", ")}: ${shape} (the agent scope is the query parameter ?agent=<id>)`);
  const sections = (body as { sections?: unknown }).sections;
  if (typeof sections !== "object" || sections === null || Array.isArray(sections)) throw invalid(shape);

  const entries = Object.entries(sections as Record<string, unknown>);
  const badNames = entries.map(([n]) => n).filter((n) => !isValidName(n));
  if (badNames.length > 0) {
    throw invalid(
      `invalid section ${plural(badNames.length, "name")} ${badNames.map((n) => JSON.stringify(n)).join(", ")}: names match ${nameRule}; nothing was written`,
      {
        invalid_names: badNames,
      },
    );
  }
  if (entries.some(([n]) => n === MEMORY_SECTION)) {
    throw reserved(`"${MEMORY_SECTION}" is reserved: it is the server's read-only memory instructions section; nothing was written`);
  }
  const notText = entries.filter(([, v]) => typeof v !== "string").map(([n]) => n);
  if (notText.length > 0) throw invalid(`section body must be a Markdown string: ${notText.join(", ")}; nothing was written`, { invalid_names: notText });
  for (const [name, text] of entries as [string, string][]) {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > IDENTITY_SECTION_MAX_BYTES) {
      throw invalid(
        `section "${name}" is ${bytes} bytes; the limit is ${IDENTITY_SECTION_MAX_BYTES} (${IDENTITY_SECTION_MAX_BYTES / 1024} KB); nothing was written`,
        {
          section: name,
          bytes,
          limit: IDENTITY_SECTION_MAX_BYTES,
        },
      );
    }
  }
  return (entries as [string, string][]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * PUT /identity (and /context): partial upsert, all or nothing. With an agent
 * the files go to agents/<id>/ (creating it makes the agent override unless
 * config says otherwise); config forcing the agent to off or global is a 409.
 */
export async function putIdentity(s: Services, body: IdentityPutInput, query: IdentityQuery = {}): Promise<PutResult> {
  const agent = parseIdentityQuery(query, "PUT");
  const entries = parseSections(body);
  if (agent === null) {
    await sections(s).writeSections(null, entries, s.now());
    return { ok: true, written: entries.map(([n]) => n), updated_at: (await globalView(s)).updated_at };
  }
  const forced = Object.hasOwn(s.config.identityAgents, agent) ? s.config.identityAgents[agent] : undefined;
  if (forced === "off" || forced === "global") {
    throw conflict(
      `agent "${agent}" is set to "${forced}" by identityAgents in config.json, so it has no sections of its own; change its mode to "override" (or remove it) to write them`,
      { agent, mode: forced },
    );
  }
  await sections(s).writeSections(agent, entries, s.now());
  const view = await agentView(s, agent);
  return { ok: true, written: entries.map(([n]) => n), updated_at: view.updated_at, agent, mode: view.mode };
}

export const NO_SECTIONS = "No identity sections configured.";

/**
 * Sections as Markdown, each under a `### <name>` heading (the memsvc_identity
 * tool), or exactly NO_SECTIONS. With `name`, only that section; an unknown
 * name is a 404 listing the ones that exist.
 */
export async function identityMarkdown(s: Services, name?: string, agent?: string): Promise<string> {
  const view = agent === undefined ? await globalView(s) : await agentView(s, agent);
  let names = Object.keys(view.sections);
  if (name !== undefined) {
    if (!isValidName(name)) throw invalid(`invalid section name ${JSON.stringify(name)}: names match ${nameRule}`);
    if (!names.includes(name)) throw notFound(`no identity section "${name}"${names.length ? ` (sections: ${names.join(", ")})` : ""}`);
    names = [name];
  }
  return markdownOf(view.sections, names) ?? NO_SECTIONS;
}

function markdownOf(sections: Record<string, string>, names: string[]): string | null {
  if (names.length === 0) return null;
  return names.map((n) => `### ${n}\n\n${sections[n].trim()}`).join("\n\n");
}

/**
 * The identity text a session-start hook injects verbatim, or null when the
 * harness is not listed in identityClients or the scope has no sections.
 */
export async function identityForClient(s: Services, client: string, agent?: string): Promise<string | null> {
  if (!resolvedClients(s).includes(client.trim().toLowerCase())) return null;
  const view = agent === undefined ? await globalView(s) : await agentView(s, agent);
  const text = markdownOf(view.sections, Object.keys(view.sections));
  return text === null ? null : `## Identity (memsvc)\n\n${text}\n`;
}
