import { invalid } from "../errors";

/**
 * Parses an ISO date ("2026-11-21") or date-time into epoch ms. A bare date
 * means midnight UTC of that day, so a session is dated the same everywhere.
 */
export function parseSessionDate(value: unknown, field = "session_date"): number {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) {
    throw invalid(`${field} must be an ISO date such as 2026-11-21 or 2026-11-21T09:30:00Z`);
  }
  const text = value.trim();
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  // Date.parse rolls 2026-02-30 over to March; a real date survives the round trip.
  const bareDate = /^\d{4}-\d{2}-\d{2}$/.test(text);
  if (!Number.isFinite(ms) || (bareDate && new Date(ms).toISOString().slice(0, 10) !== text)) {
    throw invalid(`${field} is not a real date: "${value}"`);
  }
  return ms;
}

export const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
export const isoTime = (ms: number) => new Date(ms).toISOString();
