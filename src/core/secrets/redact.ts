/**
 * Secret redaction. Everything that leaves for the language model passes
 * here (at the route, and again in the model client as a last line of
 * defence), and so does every memory before it is stored.
 *
 * Two rule sets: our own (rules.ts: service tokens by prefix, URL, .netrc,
 * connection-string, registry, kubeconfig and assignment patterns that keep
 * the key name; command-line.ts: passwords given to commands; prose.ts:
 * passwords said in words), then secretlint's maintained
 * recommended preset (@secretlint/secretlint-rule-preset-recommend, MIT) on
 * what is left. Replacements are stable markers: `[REDACTED:<kind>]`.
 *
 * Why secretlint and not gitleaks: gitleaks' rules live in a Go binary and its
 * TOML config, and its npm wrappers download that binary at install time
 * (impossible offline and inside our compiled binary); secretlint's preset is
 * plain JavaScript that bundles into `bun build --compile` and scans 1 MB in
 * a few tens of milliseconds. Our own rules carry the service prefixes and
 * context patterns it lacks.
 */
import { rules as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import { OWN_RULES } from "./rules";
import { findSecrets } from "./secretlint-host";

export interface Redaction {
  text: string;
  /** How many secrets were replaced (for logs; never the secrets). */
  count: number;
}

export const mark = (kind: string) => `[REDACTED:${kind}]`;
const MARKER = "[REDACTED:";

// The preset's comment filter is left out: a "secretlint-disable" line in a
// transcript must not switch redaction off. The rules run in our own host
// (secretlint-host.ts), not secretlint's engine.
const PRESET = recommended.filter((r) => !r.meta.id.endsWith("filter-comments"));
const TRANSCRIPT = { filePath: "transcript.txt", ext: ".txt" };

/** Our own rules only: synchronous, for the capture client's first pass (the server runs both sets). */
export function redactOwn(input: string): Redaction {
  let text = input;
  let count = 0;
  // Rules share needles (all token prefixes have one): each is tested once a call. A marker put in
  // between never makes a secret for a later rule, so a needle's answer holds for the whole call.
  const needles = new Map<RegExp, boolean>();
  const holds = (needle: RegExp | undefined) => {
    if (!needle) return true;
    let found = needles.get(needle);
    if (found === undefined) needles.set(needle, (found = needle.test(text)));
    return found;
  };
  for (const rule of OWN_RULES) {
    if (!holds(rule.gate) || !holds(rule.needle)) continue;
    rule.pattern.lastIndex = 0;
    text = text.replace(rule.pattern, (...args) => {
      const match = args[0] as string;
      const groups = args[args.length - 1] as Record<string, string | undefined> | string;
      const value = rule.group && typeof groups === "object" ? (groups.v ?? groups.v1 ?? groups.v2 ?? groups.v3) : undefined;
      if (rule.group) {
        if (value === undefined || value.startsWith(MARKER)) return match;
        if (rule.accept && !rule.accept(value, match, following(args))) return match;
        count++;
        // The secret is the last occurrence of the group's text inside the match (the key name comes first).
        const at = match.lastIndexOf(value);
        return `${match.slice(0, at)}${mark(rule.kind)}${match.slice(at + value.length)}`;
      }
      if (match.includes(MARKER) || (rule.accept && !rule.accept(match, match, following(args)))) return match;
      count++;
      return mark(rule.kind);
    });
  }
  return { text, count };
}

/** Up to 40 characters after a match, from String.replace's callback arguments (offset and whole string come before the groups object). */
function following(args: unknown[]): string {
  const named = typeof args[args.length - 1] === "object";
  const whole = args[args.length - (named ? 2 : 1)] as string;
  const offset = args[args.length - (named ? 3 : 2)] as number;
  const end = offset + (args[0] as string).length;
  return whole.slice(end, end + 40);
}

/** Secretlint's recommended preset; ranges that already hold one of our markers are left as they are. */
async function redactPreset(input: string): Promise<Redaction> {
  const ranges = (await findSecrets(PRESET, input, TRANSCRIPT))
    .map((m) => ({ start: m.range[0], end: m.range[1], kind: markerKind(m.messageId, m.ruleId) }))
    .filter((r) => r.end > r.start && !input.slice(r.start, r.end).includes(MARKER));
  return replaceRanges(input, ranges);
}

/**
 * Replaces each range by a marker of its kind; overlapping ranges become one,
 * marked with the kind of the one that starts first (the longest of those).
 * A range that started inside another but ran past its end used to be
 * dropped, and the secret's tail past the first range stayed in the text.
 */
export function replaceRanges(input: string, ranges: readonly { start: number; end: number; kind: string }[]): Redaction {
  const sorted = [...ranges].sort((a, b) => a.start - b.start || b.end - a.end);
  let text = "";
  let at = 0;
  let count = 0;
  let open: { start: number; end: number; kind: string } | null = null;
  const close = (r: { start: number; end: number; kind: string }) => {
    text += input.slice(at, r.start) + mark(r.kind);
    at = r.end;
    count++;
  };
  for (const r of sorted) {
    if (open && r.start < open.end) {
      open.end = Math.max(open.end, r.end);
      continue;
    }
    if (open) close(open);
    open = { ...r };
  }
  if (open) close(open);
  return { text: text + input.slice(at), count };
}

function markerKind(messageId: string | undefined, ruleId: string): string {
  const raw = messageId && messageId !== "undefined" ? messageId : ruleId.replace(/^@secretlint\/secretlint-rule-/, "");
  return (
    raw
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "") || "secret"
  );
}

/** Replaces every secret found by both rule sets; the count is safe to log. */
export async function redactSecrets(input: string): Promise<Redaction> {
  if (input.length === 0) return { text: input, count: 0 };
  const own = redactOwn(input);
  const preset = await redactPreset(own.text);
  return { text: preset.text, count: own.count + preset.count };
}

export async function redact(input: string): Promise<string> {
  return (await redactSecrets(input)).text;
}
