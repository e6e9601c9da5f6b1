/**
 * Our own secret patterns, run before secretlint's recommended preset (see
 * redact.ts). They cover what that preset does not: tokens of services it has
 * no rule for, credentials in URLs, command lines (command-line.ts),
 * .netrc/.pgpass lines, connection strings, registry and cluster config
 * files, secrets named by the key they are assigned to, and passwords said in
 * words (prose.ts). Token formats follow the vendors' published
 * prefixes. Patterns favour recall: a lost config value costs little, a stored
 * key a lot.
 */
import { REDACT_BARE_SECRET_MIN_ENTROPY, REDACT_KEYWORD_SECRET_MIN_ENTROPY } from "./tuning";
import { COMMAND_LINE_RULES } from "./command-line";
import { PROSE_RULES } from "./prose";
import { unquote } from "./shell";
import { credentialLike, isPlaceholder, randomLooking, type SecretRule } from "./values";

// Names whose value is a secret in assignments: PASSWORD=, "api_key": , token: , DB_PASS= ...
const SECRET_NAME =
  "[A-Za-z0-9_.-]{0,64}(?:passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|secret[_-]?key|signing[_-]?key|encryption[_-]?key|client[_-]?secret|credentials?|auth[_-]?key|client-key-data|sas[_-]?key|account[_-]?key|conn(?:ection)?[_-]?str(?:ing)?)[A-Za-z0-9_.-]{0,64}|(?:[A-Za-z0-9_.-]{0,64}[_.-])?pass";

// Names that hold something about a secret, not the secret: tokenFile, apiKeyHeader, password_length.
const NOT_SECRET_NAME =
  /(?:header|name|names|file|path|url|uri|endpoint|type|length|len|env|var|field|prefix|count|limit|ttl|expiry|expires(?:_?in)?|policy|hint|label|format|mode|ref|arn|rotation|version)["']?\s*(?::|=|:=|=>)\s*$/i;

// An assigned value: "..." (with \" inside; a lone trailing backslash as before), '...', $'...', JSON-escaped \"...\",
// <placeholder>, {{ template }}, or bare (backslash escapes kept in it; an escaped quote at its end closes a JSON string).
// Quoted parts are unrolled loops (shell.ts says why); the shortest value (3 characters) is checked in accept.
const ASSIGNED_VALUE = [
  String.raw`"[^"\\\n]*(?:\\[^\n][^"\\\n]*)*"`,
  String.raw`"[^"\n]{3,}"`,
  String.raw`'[^'\n]{3,}'`,
  String.raw`\$'[^'\\\n]*(?:\\+[^\n\\][^'\\\n]*)*'`,
  String.raw`\\"[^"\\\n]*(?:\\[^"\n][^"\\\n]*)*\\"`,
  String.raw`<[^>\n]*>`,
  String.raw`\$?\{\{[^}\n]*\}\}`,
  String.raw`(?!\[REDACTED)(?:[^\s,;"'\x60)}\]\\]+|\\(?:[^\n"']|["'](?=[^\s\\,;)}\]]))){1,64}`,
].join("|");

const T = (kind: string, pattern: RegExp): SecretRule => ({ kind, pattern });

/**
 * Token rules (whole-match, flags "g") share one needle: all their patterns
 * as one alternation, which matches somewhere exactly when one of them does.
 * A text with no token (most memories) then costs one scan instead of ~70.
 */
function withUnionNeedle(rules: SecretRule[]): SecretRule[] {
  const joinable = rules.filter((r) => !r.group && !r.accept && r.pattern.flags === "g");
  const needle = new RegExp(joinable.map((r) => `(?:${r.pattern.source})`).join("|"));
  return rules.map((r) => (joinable.includes(r) ? { ...r, needle } : r));
}

// Every name SECRET_NAME knows holds one of these (api_key, access-key -> key; connection_string -> conn).
const SECRET_NAME_NEEDLE = /pass|pwd|secret|token|key|credential|conn/i;

export const OWN_RULES: SecretRule[] = withUnionNeedle([
  // PEM blocks, complete or cut off by a truncated tool output, also JSON-escaped.
  T("private-key", /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)/g),
  T("putty-private-key", /PuTTY-User-Key-File-\d+:[\s\S]*?(?:Private-MAC: *[0-9a-f]+|$)/g),
  T("age-secret-key", /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g),
  T("jwt", /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g),

  // Well-known services, by their published token prefixes.
  T("anthropic-key", /\bsk-ant-[A-Za-z0-9_-]{16,}/g),
  T("openai-key", /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}/g),
  T("stripe-key", /\b(?:[rs]k|pk)_(?:live|test)_[A-Za-z0-9]{10,}/g),
  T("stripe-webhook-secret", /\bwhsec_[A-Za-z0-9]{20,}/g),
  T("github-token", /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g),
  T("gitlab-token", /\bgl(?:pat|dt|rt|ptt|soat|oas|ft|imt|agent|cbt)-[A-Za-z0-9_-]{20,}/g),
  T("aws-access-key", /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[0-9A-Z]{16}\b/g),
  T("slack-token", /\bx(?:ox[abposre]|app)-[A-Za-z0-9-]{10,}/g),
  T("slack-webhook", /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]+/g),
  T("discord-webhook", /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+/g),
  T("teams-webhook", /https:\/\/[a-z0-9-]+\.webhook\.office\.com\/webhookb2\/[^\s'"]+/g),
  T("discord-bot-token", /\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b/g),
  T("telegram-bot-token", /(?<!\d)\d{8,10}:AA[A-Za-z0-9_-]{33}\b/g),
  T("google-api-key", /\bAIza[0-9A-Za-z_-]{35}\b/g),
  T("google-oauth-secret", /\bGOCSPX-[A-Za-z0-9_-]{20,}/g),
  T("google-oauth-token", /\bya29\.[A-Za-z0-9_-]{20,}/g),
  T("npm-token", /\bnpm_[A-Za-z0-9]{36}\b/g),
  T("pypi-token", /\bpypi-AgE[A-Za-z0-9_-]{50,}/g),
  T("rubygems-token", /\brubygems_[a-f0-9]{48}\b/g),
  T("nuget-key", /\boy2[a-z0-9]{43}\b/g),
  T("huggingface-token", /\bhf_[A-Za-z0-9]{30,}\b/g),
  T("replicate-token", /\br8_[A-Za-z0-9]{37}\b/g),
  T("groq-key", /\bgsk_[A-Za-z0-9]{40,}\b/g),
  T("perplexity-key", /\bpplx-[A-Za-z0-9]{40,}\b/g),
  T("xai-key", /\bxai-[A-Za-z0-9]{40,}\b/g),
  T("sendgrid-key", /\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}\b/g),
  T("twilio-key", /\bSK[0-9a-f]{32}\b/g),
  T("mailgun-key", /\bkey-[0-9a-f]{32}\b/g),
  T("mailchimp-key", /\b[0-9a-f]{32}-us\d{1,2}\b/g),
  T("shopify-token", /\bshp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32,}\b/g),
  T("digitalocean-token", /\bdo[opr]_v1_[a-f0-9]{64}\b/g),
  T("doppler-token", /\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]+\.)?[A-Za-z0-9]{40,}\b/g),
  T("pulumi-token", /\bpul-[a-f0-9]{40}\b/g),
  T("postman-key", /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g),
  T("newrelic-key", /\bNR(?:AK|II|JS|RA)-[A-Za-z0-9]{27,32}\b/g),
  T("sentry-token", /\bsntr(?:ys|yu|y)_[A-Za-z0-9+/=_-]{40,}/g),
  T("dynatrace-token", /\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b/g),
  T("planetscale-token", /\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}\b/g),
  T("flyio-token", /\b(?:FlyV1 fm\d+_[A-Za-z0-9+/=,_-]{50,}|fo1_[A-Za-z0-9_-]{43})/g),
  T("supabase-token", /\bsbp_[a-f0-9]{40}\b/g),
  T("heroku-key", /\bHRKU-[A-Za-z0-9_-]{20,}/g),
  T("linear-key", /\blin_(?:api|oauth)_[A-Za-z0-9]{32,}\b/g),
  T("notion-token", /\b(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b/g),
  T("atlassian-token", /\bATATT3[A-Za-z0-9_=-]{100,}/g),
  T("databricks-token", /\bdapi[a-f0-9]{32}(?:-\d)?\b/g),
  T("docker-token", /\bdckr_pat_[A-Za-z0-9_-]{27,}/g),
  T("figma-token", /\bfig[dou]_[A-Za-z0-9_-]{40,}/g),
  T("vercel-token", /\bvc[pikar]_[A-Za-z0-9]{24,}\b/g),
  T("tailscale-key", /\btskey-[a-z]+-[A-Za-z0-9_]{8,}-[A-Za-z0-9_]{16,}\b/g),
  T("vault-token", /\bhv[sbr]\.[A-Za-z0-9_-]{24,}/g),
  T("grafana-token", /\b(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})/g),
  T("terraform-token", /\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}/g),
  T("netlify-token", /\bnf[pc]_[A-Za-z0-9]{36,}\b/g),
  T("render-key", /\brnd_[A-Za-z0-9]{28,}\b/g),
  T("buildkite-token", /\bbk(?:ua|ct)_[a-f0-9]{40}\b/g),
  T("circleci-token", /\bCCI(?:PAT|PRJ)_[A-Za-z0-9]{20,}_[a-f0-9]{40}\b/g),
  T("artifactory-key", /\bAKCp[A-Za-z0-9]{60,}\b/g),
  T("alibaba-key", /\bLTAI[A-Za-z0-9]{20}\b/g),
  T("square-token", /\b(?:sq0atp|sq0csp|EAAA)[A-Za-z0-9_-]{22,}\b/g),
  T("paypal-token", /\baccess_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}\b/g),
  T("facebook-token", /\bEAA[BCDGI][A-Za-z0-9]{80,}/g),
  T("mapbox-secret", /\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}/g),
  T("azure-ad-client-secret", /(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g),
  T("clojars-token", /\bCLOJARS_[a-z0-9]{60}\b/gi),
  T("easypost-key", /\bEZ[AT]K[a-z0-9]{54}\b/gi),
  T("flutterwave-key", /\bFLW(?:SECK|PUBK)_TEST-[a-h0-9]{32}-X\b/g),
  T("readme-key", /\brdme_[a-z0-9]{70}\b/g),
  T("shippo-token", /\bshippo_(?:live|test)_[a-f0-9]{40}\b/g),
  T("lob-key", /\b(?:live|test)_(?:pub_)?[a-f0-9]{31,35}\b/g),

  // Cloud connection strings (Azure storage, Service Bus, Event Hubs, SAS URLs, ADO.NET).
  {
    kind: "connection-string",
    pattern: /\b(?:AccountKey|SharedAccessKey|SharedSecretValue|SharedAccessSignature|AccessKey)\s*=\s*(?<v>[^;"'\s]{8,})/gi,
    group: "v",
  },
  { kind: "sas-signature", pattern: /[?&]sig=(?<v>[A-Za-z0-9%+/=]{16,})/g, group: "v" },
  { kind: "url-signature", pattern: /[?&](?:X-Amz-Signature|X-Goog-Signature|Signature|X-Amz-Security-Token)=(?<v>[A-Za-z0-9%+/=_-]{16,})/g, group: "v" },

  // Authorization headers, any case, any scheme: only the credential goes.
  {
    kind: "authorization",
    pattern:
      /\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate|apikey|sso-key|splunk)\s+)?(?<v>(?!\[REDACTED)[^\s'",;]{8,})/gi,
    group: "v",
    accept: (v) => !isPlaceholder(v),
  },
  {
    kind: "bearer",
    pattern: /\b(?:Bearer|Basic|Token|bearer)\s+(?<v>(?!\[REDACTED)[A-Za-z0-9._~+/=-]{8,})/g,
    group: "v",
    accept: (v) => credentialLike(v) && !isPlaceholder(v),
  },
  {
    kind: "api-key-header",
    pattern: /\b(?:x-[a-z-]{0,40}api-?key|x-[a-z-]{0,40}token|x-auth[a-z-]{0,40}|api-key|private-token)["']?\s*[:=]\s*["']?(?<v>(?!\[REDACTED)[^\s'",;]{8,})/gi,
    group: "v",
    accept: (v) => !isPlaceholder(v),
  },

  // scheme://user:password@host, also with an empty user or '/' or '@' in the password.
  {
    kind: "password",
    needle: /:\/\//,
    pattern: /\b[a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@'"<>[\]]{0,256}:(?<v>(?!\[REDACTED)[^\s'"<>]{1,256})@(?=[^\s@'"<>/]{0,256}(?:[\s'"<>/?#]|$))/gi,
    group: "v",
    // host:port/path@x is a port, not a password.
    accept: (v) => !/^\d+(?:\/|$)/.test(v),
  },

  // Command lines: passwords given to database clients, ssh, HTTP clients, registries, shares, package and cloud CLIs.
  ...COMMAND_LINE_RULES,

  // .netrc (machine h login u password p) and .pgpass (host:port:db:user:password).
  // ("default" only opens a .netrc entry at a line's start: "the default password is X" is prose, prose.ts has it.)
  {
    kind: "netrc-password",
    pattern: /(?:\bmachine\s+\S+|^[ \t]*default)(?:\s+login\s+\S+)?(?:\s+account\s+\S+)?\s+password\s+(?<v>\S+)/gm,
    needle: /password/,
    group: "v",
  },
  { kind: "pgpass-password", pattern: /^(?:[A-Za-z0-9.*_-]+):(?:\d+|\*):[^\s:]+:[^\s:]+:(?<v>\S+)$/gm, group: "v" },

  // Container registry auth (~/.docker/config.json) and cluster configs (kubeconfig).
  { kind: "registry-auth", pattern: /"(?:auth|identitytoken|registrytoken)"\s*:\s*"(?<v>[A-Za-z0-9+/=_.-]{8,})"/gi, group: "v" },
  { kind: "kube-key", pattern: /\b(?:client-key-data|id-token|refresh-token|access-token)\s*:\s*["']?(?<v>[A-Za-z0-9+/=._-]{8,})/g, group: "v" },

  // Assignments: NAME=value, NAME: value, "name": "value", NAME := value.
  {
    kind: "secret",
    pattern: new RegExp(`(?<![A-Za-z0-9_.-])(?:${SECRET_NAME})\\b(?:\\\\?["'])?\\s*(?::|=|:=|=>)\\s*(?<v>${ASSIGNED_VALUE})`, "gi"),
    needle: SECRET_NAME_NEEDLE,
    group: "v",
    accept: (v, match) =>
      unquote(v).length >= 3 && !isPlaceholder(/^(?:\$'|\\")/.test(v) ? `"${unquote(v)}"` : v) && !NOT_SECRET_NAME.test(match.slice(0, match.lastIndexOf(v))),
  },

  // A high-entropy string close after a word like secret, key, token or password ("the secret key is wJalr...").
  {
    kind: "secret",
    needle: SECRET_NAME_NEEDLE,
    pattern:
      /\b(?:secrets?|keys?|tokens?|passwords?|passwd|passphrase|credentials?|apikey|api key)\b[^\n]{0,24}?(?<![A-Za-z0-9+/_=-])(?<v>[A-Za-z0-9+/_=-]{16,})(?![A-Za-z0-9+/_=-])/gi,
    group: "v",
    accept: (v) => randomLooking(v, REDACT_KEYWORD_SECRET_MIN_ENTROPY),
  },
  // An AWS-style secret key (40 base64 characters) standing alone in prose.
  {
    kind: "aws-secret-key",
    pattern: /(?<![A-Za-z0-9+/=_-])(?<v>[A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=_-])/g,
    group: "v",
    accept: (v) => /[+/]/.test(v) && randomLooking(v, REDACT_BARE_SECRET_MIN_ENTROPY),
  },

  // Passwords, passphrases, PINs and tokens said in words ("the root password is ...").
  ...PROSE_RULES,
]);
