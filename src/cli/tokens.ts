import { userInfo } from "node:os";
import { loadConfig } from "../config";
import { readAudit } from "../core/audit";
import { createToken, revokeToken, tokenView } from "../core/tokens";
import { parseFlags, UsageError } from "./args";
import { withStorage } from "./open";

export const TOKEN_HELP = `memsvc token create --name <name> [--role reader|writer|admin] [--projects a,b] [--expires 90d]
memsvc token list [--json]
memsvc token revoke <name>

Member tokens, kept in the database (only a SHA-256 hash of each): every
server over the database authenticates against them, and a revocation counts
at the next request on every server. create prints the token once; role
defaults to writer; --projects limits it to those projects; --expires takes
days (90d), hours (12h) or weeks (2w). Runs on the database itself (the
config's storage and database_url): on PostgreSQL the first admin token is
made this way, since a server's config token authenticates only on SQLite.`;

export const AUDIT_HELP = `memsvc audit [--actor <name>] [--action <action or prefix.>] [--since <date>] [--until <date>] [--limit N] [--before <id>] [--json]

The audit log, newest first: who (token name), what, when and from where.
Reads the database directly (as an admin does through GET /audit).`;

const cliActor = () =>
  `cli:${(() => {
    try {
      return userInfo().username;
    } catch {
      return "unknown";
    }
  })()}`;

export async function runToken(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(TOKEN_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (sub === "create") {
    const { values, positionals } = parseFlags(
      rest,
      { name: { type: "string" }, role: { type: "string" }, projects: { type: "string" }, expires: { type: "string" } },
      true,
    );
    if (values.help) return (console.log(TOKEN_HELP), 0);
    if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
    if (!values.name) throw new UsageError("give the token's name: --name <name>");
    return withStorage("token", loadConfig(), async (storage) => {
      const now = Date.now();
      const { token, row } = await createToken(
        storage.tokens,
        { name: values.name!, role: values.role, projects: values.projects, expires: values.expires },
        now,
      );
      await storage.audit.append([
        {
          at: now,
          actor: cliActor(),
          action: "token.created",
          target: row.name,
          detail: JSON.stringify({ role: row.role, projects: row.projects }),
          peer: "cli",
        },
      ]);
      // The token alone on stdout (scripts capture it); the rest on stderr.
      console.log(token);
      console.error(
        `token ${row.name} (${row.role}${row.projects ? `, projects ${row.projects.join(", ")}` : ""}${row.expiresAt ? `, expires ${new Date(row.expiresAt).toISOString()}` : ""}) created; it is shown only now: only its hash is stored`,
      );
      return 0;
    });
  }
  if (sub === "list") {
    const { values } = parseFlags(rest, { json: { type: "boolean" } });
    if (values.help) return (console.log(TOKEN_HELP), 0);
    return withStorage("token", loadConfig(), async (storage) => {
      const views = (await storage.tokens.list()).map((r) => tokenView(r, Date.now()));
      if (values.json) console.log(JSON.stringify(views, null, 2));
      else if (views.length === 0) console.log("no tokens in the database");
      else
        for (const v of views)
          console.log(
            `${v.name}  ${v.role}  ${v.state}  projects ${v.projects?.join(",") ?? "all"}  created ${v.created_at}  last used ${v.last_used_at ?? "never"}  expires ${v.expires_at ?? "never"}`,
          );
      return 0;
    });
  }
  if (sub === "revoke") {
    const { values, positionals } = parseFlags(rest, {}, true);
    if (values.help) return (console.log(TOKEN_HELP), 0);
    if (positionals.length !== 1) throw new UsageError("give exactly one token name");
    return withStorage("token", loadConfig(), async (storage) => {
      const now = Date.now();
      await revokeToken(storage.tokens, positionals[0], now);
      await storage.audit.append([{ at: now, actor: cliActor(), action: "token.revoked", target: positionals[0], detail: null, peer: "cli" }]);
      console.log(`token ${positionals[0]} revoked: refused from the next request on every server`);
      return 0;
    });
  }
  throw new UsageError(`unknown subcommand "${sub}": create, list or revoke`);
}

export async function runAudit(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {
    actor: { type: "string" },
    action: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    limit: { type: "string" },
    before: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) return (console.log(AUDIT_HELP), 0);
  return withStorage("audit", loadConfig(), async (storage) => {
    const page = await readAudit(storage.audit, values);
    if (values.json) console.log(JSON.stringify(page, null, 2));
    else {
      for (const e of page.entries)
        console.log(`${e.at}  ${e.actor}  ${e.action}${e.target ? `  ${e.target}` : ""}${e.peer ? `  from ${e.peer}` : ""}${e.detail ? `  ${e.detail}` : ""}`);
      if (page.next_before !== null) console.error(`more: memsvc audit --before ${page.next_before}`);
    }
    return 0;
  });
}
