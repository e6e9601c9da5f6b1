// What other parts of memsvc use from secrets/: explicit named exports only.
export { redact, redactOwn, redactSecrets } from "./redact";
