import type { StorageReason } from "../failures";

// Bun's SQL client: lost or refused connections, and the server's SQLSTATE for
// a full disk (53100), a read-only standby (25006), a shutdown (57P01-57P03),
// too many connections (53300) and connection exceptions (08xxx). A
// transaction whose connection is lost is rolled back by the server.
const CLIENT_CODE = /^ERR_POSTGRES_(CONNECTION_\w+|IDLE_TIMEOUT|LIFETIME_TIMEOUT)$/;
const STATES: [RegExp, StorageReason][] = [
  [/^53100$/, "disk_full"],
  [/^25006$/, "read_only"],
  [/^(08...|57P0[123]|53300)$/, "unreachable"],
];

/** What a PostgreSQL error says, from one link of an error's cause chain: a reason, a refused value, or nothing. */
export function postgresFailure(err: { code?: unknown; errno?: unknown }): StorageReason | "nul_character" | null {
  let code = err.code;
  // A server error: the SQLSTATE says what happened.
  if (code === "ERR_POSTGRES_SERVER_ERROR" && typeof err.errno === "string") code = err.errno;
  if (typeof code !== "string") return null;
  // PostgreSQL text cannot hold U+0000 (SQLite can).
  if (code === "22021" || code === "22P05") return "nul_character";
  if (CLIENT_CODE.test(code)) return "unreachable";
  return STATES.find(([re]) => re.test(code))?.[1] ?? null;
}
