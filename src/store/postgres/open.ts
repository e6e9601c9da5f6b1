/**
 * The PostgreSQL connection (placeholder until the engine base lands: Bun's SQL
 * client, drizzle pg-core, migrations under an advisory lock).
 */
export interface PgHandle {
  /** The URL without its password. */
  readonly location: string;
  close(): Promise<void>;
}
