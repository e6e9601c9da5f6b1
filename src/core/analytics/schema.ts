import { type Static, Type } from "@sinclair/typebox";
import { count } from "../fields";
import { DASHBOARD_DEFAULT_DAYS, DASHBOARD_MAX_DAYS } from "./tuning";

/** GET /index and memsvc_index: no input. */
export const IndexInput = Type.Object({}, { additionalProperties: false });

/** GET /dashboard/data. */
export const DashboardInput = Type.Object(
  { days: count(`Daily series over the last this many UTC days, today included (default ${DASHBOARD_DEFAULT_DAYS}).`, DASHBOARD_MAX_DAYS) },
  { additionalProperties: false },
);
export type DashboardInput = Static<typeof DashboardInput>;
