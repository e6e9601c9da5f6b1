import { resolve } from "node:path";
import { repoInfo } from "../capture/git";
import { checkStaleness } from "../capture/stale";
import { loadConfig } from "../config";
import { parseFlags } from "./args";
import { counted } from "../core/text";

export const STALE_HELP = `memsvc stale [--dir <path>] [--json]

Checks the memories anchored to the git repository at <path> (default: the
current folder) against git, and marks on the server those whose files
changed since the commit they were anchored at (with the files, the number
of commits and the date of the last one), whose files no longer exist, or
whose commit the repository no longer has. Memories whose files are as they
were lose an earlier mark. Repositories capture saw on this machine whose
folder is gone have all their memories marked. Only paths, counts and commit
ids are sent, never source code. \`memsvc hook session-start\` runs the same
check within its time budget.

Exit status: 0 checked, 1 not inside a git repository or no server answers,
2 usage errors.`;

export async function runStale(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { dir: { type: "string" }, json: { type: "boolean" } });
  if (values.help) {
    console.log(STALE_HELP);
    return 0;
  }
  const dir = resolve(values.dir ?? process.cwd());
  const config = loadConfig();
  const inRepo = repoInfo(dir) !== null;
  let reports: Awaited<ReturnType<typeof checkStaleness>>;
  try {
    reports = await checkStaleness(config, dir, Date.now() + 5 * 60_000);
  } catch (e) {
    console.error(`memsvc stale: ${(e as Error).message} (server ${config.serverUrl})`);
    return 1;
  }
  if (values.json) console.log(JSON.stringify({ reports }, null, 2));
  else {
    for (const r of reports) {
      console.log(
        `${r.repo}${r.root ? ` (${r.root})` : " (folder gone)"}: ${counted(r.anchors, "anchored memory", "anchored memories")}, ${r.marked} marked possibly stale, ${counted(r.cleared, "mark")} cleared${r.unchecked ? `, ${r.unchecked} not checked` : ""}`,
      );
      for (const m of r.marks) {
        const what =
          m.reason === "changed"
            ? `${m.changed_paths.join(", ")} changed in ${counted(m.commits, "commit")}`
            : m.reason === "missing"
              ? `${m.missing_paths.join(", ")} missing`
              : m.reason;
        console.log(`  ${m.id.slice(0, 8)}: ${what}`);
      }
    }
  }
  if (!inRepo) {
    console.error(`memsvc stale: ${dir} is not inside a git repository`);
    return 1;
  }
  return 0;
}
