// What other parts of memsvc use from analytics/: explicit named exports only.
export { account } from "./account";
export { dashboardData } from "./analytics";
export { domainIndex, domainLift, renderDomainIndex } from "./domains";
export type { DomainIndex } from "./domains";
export type { AnalyticsStore, DashboardFigures, DomainRows } from "./store";
