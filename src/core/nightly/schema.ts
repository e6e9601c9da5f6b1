import { type Static, Type } from "@sinclair/typebox";
import { count, project } from "../fields";
import { LEARNINGS_DEFAULT_DAYS, LEARNINGS_MAX_DAYS } from "./tuning";

/** GET /learnings (alias /lessons) and memsvc_learnings (alias memsvc_lessons). */
export const LearningsInput = Type.Object(
  {
    days: count(`Look-back in days (default ${LEARNINGS_DEFAULT_DAYS}).`, LEARNINGS_MAX_DAYS),
    project: project("Project name; that project's learnings plus the global ones."),
  },
  { additionalProperties: false },
);
export type LearningsInput = Static<typeof LearningsInput>;
