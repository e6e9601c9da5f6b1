import { keywords } from "../text";
import { QUERY_MAX_CHARS, QUERY_MAX_TERMS } from "./tuning";

/**
 * The query's keywords as full-text search takes them: word characters only,
 * stop words dropped, so no user text reaches an engine's query syntax.
 * (Its own file: both engines import it, and search.ts imports half of core.)
 */
export function queryKeywords(query: string): string[] {
  return [...new Set(keywords(query.slice(0, QUERY_MAX_CHARS)))].slice(0, QUERY_MAX_TERMS);
}
