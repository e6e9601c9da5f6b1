// The `stopword` package ships no types; only its English list is used (src/core/analytics/domains.ts).
declare module "stopword" {
  export const eng: string[];
}
