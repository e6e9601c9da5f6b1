import { AppError } from "../../errors";

/** The connection failed, or the database cannot hold a store: the operator's to fix, so a 503 naming the cause. */
export class PgUnavailableError extends AppError {
  constructor(message: string, reason: "unreachable" | "no_pgvector" | "migration_failed" | "closed") {
    super("unavailable", message, { reason });
    this.name = "PgUnavailableError";
  }
}
