/**
 * Secret redaction. Runs on every transcript before any of it reaches the
 * language model, and again on the distilled memories (a model may echo a
 * secret it was shown in an earlier turn of its own context). Patterns favour
 * recall over precision: a lost config value costs little, a stored key a lot.
 */

export interface Redaction {
  text: string;
  /** How many secrets were replaced (for logs; never the secrets). */
  count: number;
}

interface Rule {
  kind: string;
  pattern: RegExp;
  /** Replacement; `$<name>` groups keep the non-secret context (key names, URL parts). */
  replace: string;
}

const mark = (kind: string) => `[REDACTED:${kind}]`;

// Names whose value is a secret in assignments: PASSWORD=, "api_key": , token: ...
const SECRET_NAME =
  "[A-Za-z0-9_.-]*(?:passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth[_-]?key)[A-Za-z0-9_.-]*";

const RULES: Rule[] = [
  // PEM blocks, complete or cut off by a truncated tool output.
  {
    kind: "private-key",
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: mark("private-key"),
  },
  { kind: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, replace: mark("jwt") },
  { kind: "anthropic-key", pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g, replace: mark("api-key") },
  { kind: "openai-key", pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}/g, replace: mark("api-key") },
  { kind: "stripe-key", pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}/g, replace: mark("api-key") },
  { kind: "github-token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, replace: mark("github-token") },
  { kind: "gitlab-token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g, replace: mark("gitlab-token") },
  { kind: "aws-access-key", pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b/g, replace: mark("aws-key") },
  { kind: "slack-token", pattern: /\bxox[abposre]-[A-Za-z0-9-]{10,}/g, replace: mark("slack-token") },
  { kind: "slack-webhook", pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+/g, replace: mark("slack-webhook") },
  { kind: "google-key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, replace: mark("api-key") },
  { kind: "npm-token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/g, replace: mark("npm-token") },
  { kind: "huggingface-token", pattern: /\bhf_[A-Za-z0-9]{30,}\b/g, replace: mark("api-key") },
  // Authorization headers and CLI flags: keep the scheme, drop the credential.
  { kind: "bearer", pattern: /\b(?<scheme>Bearer|Basic|Token)\s+(?!\[REDACTED)[A-Za-z0-9._~+/=-]{8,}/g, replace: `$<scheme> ${mark("token")}` },
  // user:password@host in any URL-like string; the user name stays.
  {
    kind: "url-password",
    pattern: /(?<pre>\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@'"]+):(?!\[REDACTED)[^\s@/'"]+@/gi,
    replace: `$<pre>:${mark("password")}@`,
  },
  // Assignments: NAME=value, NAME: value, "name": "value", --password value.
  {
    kind: "assignment",
    pattern: new RegExp(
      `(?<key>(?:["']?)\\b${SECRET_NAME}\\b(?:["']?)\\s*(?::|=|:=|=>)\\s*)(?<value>"[^"\\n]{3,}"|'[^'\\n]{3,}'|<[^>\\n]*>|(?!\\[REDACTED)[^\\s,;"'\`)}\\]]{3,})`,
      "gi",
    ),
    replace: `$<key>${mark("secret")}`,
  },
  { kind: "flag", pattern: /(?<flag>--?(?:password|passwd|token|api-key|secret)[= ])(?!\[REDACTED)[^\s'"]{3,}/gi, replace: `$<flag>${mark("secret")}` },
];

/** Replaces every secret found; the count is safe to log. */
export function redactSecrets(input: string): Redaction {
  let text = input;
  let count = 0;
  for (const rule of RULES) {
    text = text.replace(rule.pattern, (...args) => {
      const groups = args[args.length - 1] as Record<string, string> | undefined;
      const match = args[0] as string;
      // Values that only name a variable or a placeholder are not secrets.
      if (rule.kind === "assignment" && groups && isPlaceholder(groups.value)) return match;
      count++;
      return rule.replace.replace(/\$<(\w+)>/g, (_, name: string) => groups?.[name] ?? "");
    });
  }
  return { text, count };
}

export function redact(input: string): string {
  return redactSecrets(input).text;
}

function isPlaceholder(raw: string | undefined): boolean {
  if (!raw) return true;
  const v = raw.replace(/^["']|["']$/g, "");
  return (
    /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(v) || // $VAR, ${VAR}
    /^process\.env\./.test(v) ||
    /^<[^>]*>$/.test(v) || // <token>
    /^(?:x+|\*+|\.\.\.|null|none|undefined|true|false|string|number|str|optional|required)$/i.test(v) ||
    /^\[REDACTED/.test(v) ||
    /^\d{1,7}$/.test(v) // counters such as max_tokens: 2000
  );
}
