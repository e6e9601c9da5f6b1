/**
 * Writes the generated reference of docs/api.md (between the BEGIN/END
 * markers) from the OpenAPI document the server serves at GET /openapi.json.
 * `bun scripts/api-doc.ts` rewrites it; `--check` exits 1 when the committed
 * file differs (test/unit/repo/api-doc.test.ts runs the same comparison).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Services } from "../src/core/services";
import { createApp } from "../src/http/app";

export const BEGIN = "<!-- BEGIN GENERATED: bun scripts/api-doc.ts (from GET /openapi.json); do not edit by hand -->";
export const END = "<!-- END GENERATED -->";
export const API_DOC = join(import.meta.dir, "..", "docs", "api.md");

type Schema = {
  type?: string;
  description?: string;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
};
type Param = { name: string; in: string; required?: boolean; schema?: Schema };
type Operation = { parameters?: Param[]; requestBody?: { content?: Record<string, { schema?: Schema }> } };
export type OpenApiDoc = { paths: Record<string, Record<string, Operation>> };

/** The document as GET /openapi.json answers it (routes only: no request reaches a handler). */
export async function openApiDocument(): Promise<OpenApiDoc> {
  const s = {
    config: {
      llm: { provider: "openai" },
      paths: { state: "/nonexistent" },
      token: "doc",
      auth: { localhostBypass: false, localhostBypassFrom: "default", rateLimitPerMinute: 0 },
    },
    storage: { engine: "sqlite" },
    traffic: { note() {} },
    log: (level: string, message: string, extra?: unknown) => console.error(level, message, extra),
  } as unknown as Services;
  const res = await createApp(s).handle(new Request("http://localhost/openapi.json", { headers: { authorization: "Bearer doc" } }));
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  return (await res.json()) as OpenApiDoc;
}

const cell = (v: string) => v.replace(/\|/g, "\\|").replace(/\n/g, " ");

function typeOf(s: Schema | undefined): string {
  if (!s) return "any";
  if (s.anyOf) return s.anyOf.map(typeOf).join(" or ");
  if (s.enum) return s.enum.map((v) => (v === "" ? "empty" : `\`${String(v)}\``)).join(", ");
  const range = [s.minimum !== undefined ? `≥ ${s.minimum}` : "", s.maximum !== undefined ? `≤ ${s.maximum}` : ""].filter(Boolean).join(", ");
  return `${s.type ?? "any"}${range ? ` (${range})` : ""}`;
}

function table(rows: [string, string, boolean, string][]): string[] {
  if (rows.length === 0) return [];
  return [
    "| Name | In | Type | Required | Description |",
    "|---|---|---|---|---|",
    ...rows.map(
      ([name, where, req, d]) => `| \`${name}\` | ${where} | ${cell(d.split("\u0000")[0])} | ${req ? "yes" : "no"} | ${cell(d.split("\u0000")[1] ?? "")} |`,
    ),
  ];
}

/** Markdown: one section per operation that declares input, in path order; the rest listed by name. */
export function renderReference(doc: OpenApiDoc): string {
  const out: string[] = [];
  const bare: string[] = [];
  for (const path of Object.keys(doc.paths).sort()) {
    for (const [method, op] of Object.entries(doc.paths[path])) {
      const rows: [string, string, boolean, string][] = [];
      for (const p of op.parameters ?? [])
        if (p.in !== "path" || path.includes("{")) rows.push([p.name, p.in, p.required === true, `${typeOf(p.schema)}\u0000${p.schema?.description ?? ""}`]);
      const body = op.requestBody?.content?.["application/json"]?.schema;
      for (const [name, s] of Object.entries(body?.properties ?? {}))
        rows.push([name, "body", body?.required?.includes(name) === true, `${typeOf(s)}\u0000${s.description ?? ""}`]);
      const title = `${method.toUpperCase()} ${path}`;
      if (rows.length === 0) bare.push(`\`${title}\``);
      else out.push(`### \`${title}\``, "", ...table(rows), "");
    }
  }
  return [...out, "### Other routes (no declared input)", "", bare.join(", "), ""].join("\n");
}

/** `current` with its generated region replaced by `reference` (appended with the markers when absent). */
export function withReference(current: string, reference: string): string {
  const region = `${BEGIN}\n\n${reference.trimEnd()}\n\n${END}`;
  const a = current.indexOf(BEGIN);
  const b = current.indexOf(END);
  if (a >= 0 && b > a) return current.slice(0, a) + region + current.slice(b + END.length);
  return `${current.trimEnd()}\n\n## Reference (generated)\n\nEvery route's parameters, as the server's OpenAPI document (GET /openapi.json) declares them.\n\n${region}\n`;
}

if (import.meta.main) {
  const current = readFileSync(API_DOC, "utf8");
  const next = withReference(current, renderReference(await openApiDocument()));
  if (process.argv.includes("--check")) {
    if (next !== current) {
      console.error("docs/api.md differs from GET /openapi.json: run bun scripts/api-doc.ts");
      process.exit(1);
    }
  } else if (next !== current) writeFileSync(API_DOC, next);
  process.exit(0);
}
