import { loadConfig } from "../config";
import { parseFlags, UsageError } from "./args";

const KINDS = ["wrong", "outdated", "useful", "irrelevant"];
const ACTIONS = ["retire", "unretire", "review"];

export const FEEDBACK_HELP = `memsvc feedback <id> wrong|outdated|useful|irrelevant [--note <text>] [--receipt <id>] [--prompt <text>] [--json]
memsvc feedback <id> retire|unretire|review [--note <text>]

Tells memory what a memory did for the agent, so the next prompts go better
(id: its first 8 characters or the full UUID):

  wrong        it is false: out of recall at once, marked for review in the
               memory browser; rewriting it (PATCH /memory, memsvc_update)
               or restoring a version settles the mark (history keeps both)
  outdated     it was true once: a stale mark with the note, as \`memsvc
               stale\` makes; recall and search show it and rank it lower
  irrelevant   recalled for prompts it is not about: demoted for prompts
               like the one it was shown for (its latest showing, or
               --receipt, or --prompt), not for other topics
  useful       it helped: counts as a use (strengthens it)
  retire       out of recall and search, kept with its history
  unretire     back in recall and search
  review       settles its wrong and outdated marks (it was right after all)

Every feedback is an event: export and import carry it, the dashboard counts
it. Talks to the running server with the configured token; exits 1 when the
server refuses (unknown id, no prompt for irrelevant) or does not answer.`;

export async function runFeedback(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { note: { type: "string" }, receipt: { type: "string" }, prompt: { type: "string" }, json: { type: "boolean" } },
    true,
  );
  if (values.help) {
    console.log(FEEDBACK_HELP);
    return 0;
  }
  if (positionals.length !== 2) throw new UsageError("give a memory id and one of wrong, outdated, useful, irrelevant (or retire, unretire, review)");
  const [id, kind] = positionals;
  const isAction = ACTIONS.includes(kind);
  if (!KINDS.includes(kind) && !isAction)
    throw new UsageError(`"${kind}" is not a kind: use wrong, outdated, useful or irrelevant (or retire, unretire, review)`);
  if (isAction && (values.receipt !== undefined || values.prompt !== undefined))
    throw new UsageError(`--receipt and --prompt apply to feedback kinds, not to ${kind}`);
  const config = loadConfig();
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (config.token) headers.authorization = `Bearer ${config.token}`;
  const path = isAction ? "/memory/review" : "/feedback";
  const body = isAction
    ? { id, action: kind, note: values.note ?? null }
    : { id, kind, note: values.note ?? null, receipt: values.receipt ?? null, prompt: values.prompt ?? null };
  let res: Response;
  try {
    res = await fetch(`${config.serverUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
  } catch (e) {
    console.error(`memsvc feedback: no server answers at ${config.serverUrl} (${(e as Error).message}); start one with \`memsvc server\``);
    return 1;
  }
  const out = (await res.json().catch(() => null)) as Record<string, any> | null;
  if (!res.ok || out === null) {
    console.error(`memsvc feedback: ${out?.error?.message ?? `HTTP ${res.status}`}`);
    return 1;
  }
  console.log(values.json ? JSON.stringify(out, null, 2) : `memory ${out.short_id}: ${out.kind}: ${out.effect}`);
  return 0;
}
