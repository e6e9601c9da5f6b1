import { type Static, Type } from "@sinclair/typebox";
import { count, project, text } from "../fields";
import { MAX_LIMIT } from "../tuning";
import { DEFAULT_RECENT_LIMIT, DEFAULT_SEARCH_LIMIT } from "./tuning";

const MIN_SCORE = "min_score must be a number from 0 to 1";

/** GET /search and memsvc_search. */
export const SearchInput = Type.Object(
  {
    query: text("What to look for, in plain words."),
    limit: count(`How many memories at most (default ${DEFAULT_SEARCH_LIMIT}).`, MAX_LIMIT),
    project: project(),
    min_score: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        error: MIN_SCORE,
        description:
          "Leave out memories scoring below this (0 to 1; about 0.3 drops those sharing only a word or two with the query). Without it the best `limit` are returned, however weak.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type SearchInput = Static<typeof SearchInput>;

/** GET /recent and memsvc_recent. */
export const RecentInput = Type.Object(
  {
    project: project(),
    limit: count(`How many memories at most (default ${DEFAULT_RECENT_LIMIT}).`, MAX_LIMIT),
  },
  { additionalProperties: false },
);
export type RecentInput = Static<typeof RecentInput>;
