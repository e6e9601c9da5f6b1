/**
 * Our own secret patterns, run before secretlint's recommended preset (see
 * redact.ts). They cover what that preset does not: tokens of services it has
 * no rule for, credentials in URLs, command lines, .netrc/.pgpass lines,
 * connection strings, registry and cluster config files, and secrets named by
 * the key they are assigned to. Token formats follow the vendors' published
 * prefixes. Patterns favour recall: a lost config value costs little, a stored
 * key a lot.
 */
import { REDACT_BARE_SECRET_MIN_ENTROPY, REDACT_KEYWORD_SECRET_MIN_ENTROPY } from "./tuning";

export interface SecretRule {
  kind: string;
  pattern: RegExp;
  /**
   * Named group holding the secret; only it is replaced and the rest of the
   * match (key names, user names, hosts, flags) stays. Without it the whole
   * match goes.
   */
  group?: "v";
  /** Extra test on the secret (and the whole match), for patterns that also match ordinary words. */
  accept?: (value: string, match: string) => boolean;
}

// Names whose value is a secret in assignments: PASSWORD=, "api_key": , token: , DB_PASS= ...
const SECRET_NAME =
  "[A-Za-z0-9_.-]{0,64}(?:passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|secret[_-]?key|signing[_-]?key|encryption[_-]?key|client[_-]?secret|credentials?|auth[_-]?key|client-key-data|sas[_-]?key|account[_-]?key|conn(?:ection)?[_-]?str(?:ing)?)[A-Za-z0-9_.-]{0,64}|(?:[A-Za-z0-9_.-]{0,64}[_.-])?pass";

// Names that hold something about a secret, not the secret: tokenFile, apiKeyHeader, password_length.
const NOT_SECRET_NAME =
  /(?:header|name|names|file|path|url|uri|endpoint|type|length|len|env|var|field|prefix|count|limit|ttl|expiry|expires(?:_?in)?|policy|hint|label|format|mode|ref|arn|rotation|version)["']?\s*(?::|=|:=|=>)\s*$/i;

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const has = (re: RegExp, s: string) => re.test(s);

/** A credential-looking value: letters and digits mixed, or long and mixed-case. */
function credentialLike(v: string): boolean {
  if (v.length < 8) return false;
  const letters = has(/[A-Za-z]/, v);
  const digits = has(/\d/, v);
  if (letters && digits) return true;
  return v.length >= 20 && has(/[a-z]/, v) && has(/[A-Z]/, v);
}

/**
 * A random-looking token of a key-like alphabet: all of upper, lower and
 * digits and high entropy. Commit SHAs and sha256 sums (hex, one case),
 * UUIDs and identifiers in words do not qualify.
 */
export function randomLooking(v: string, minEntropy: number): boolean {
  if (!(has(/[a-z]/, v) && has(/[A-Z]/, v) && has(/\d/, v))) return false;
  if (/^[0-9a-fA-F-]+$/.test(v)) return false;
  // camelCase or snake_case identifiers made of words: long letter runs, few digits.
  const digits = v.replace(/\D/g, "").length;
  let longestLower = 0;
  for (const w of v.match(/[a-z]+/g) ?? []) longestLower = Math.max(longestLower, w.length);
  if (digits <= 2 && longestLower >= 6 && !/[+/]/.test(v)) return false;
  return entropy(v) >= minEntropy;
}

const T = (kind: string, pattern: RegExp): SecretRule => ({ kind, pattern });

export const OWN_RULES: SecretRule[] = [
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
  { kind: "connection-string", pattern: /\b(?:AccountKey|SharedAccessKey|SharedSecretValue|SharedAccessSignature|AccessKey)\s*=\s*(?<v>[^;"'\s]{8,})/gi, group: "v" },
  { kind: "sas-signature", pattern: /[?&]sig=(?<v>[A-Za-z0-9%+/=]{16,})/g, group: "v" },
  { kind: "url-signature", pattern: /[?&](?:X-Amz-Signature|X-Goog-Signature|Signature|X-Amz-Security-Token)=(?<v>[A-Za-z0-9%+/=_-]{16,})/g, group: "v" },

  // Authorization headers, any case, any scheme: only the credential goes.
  { kind: "authorization", pattern: /\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate|apikey|sso-key|splunk)\s+)?(?<v>(?!\[REDACTED)[^\s'",;]{8,})/gi, group: "v", accept: (v) => !isPlaceholder(v) },
  { kind: "bearer", pattern: /\b(?:Bearer|Basic|Token|bearer)\s+(?<v>(?!\[REDACTED)[A-Za-z0-9._~+/=-]{8,})/g, group: "v", accept: (v) => credentialLike(v) && !isPlaceholder(v) },
  { kind: "api-key-header", pattern: /\b(?:x-[a-z-]{0,40}api-?key|x-[a-z-]{0,40}token|x-auth[a-z-]{0,40}|api-key|private-token)["']?\s*[:=]\s*["']?(?<v>(?!\[REDACTED)[^\s'",;]{8,})/gi, group: "v", accept: (v) => !isPlaceholder(v) },

  // scheme://user:password@host, also with an empty user or '/' or '@' in the password.
  {
    kind: "password",
    pattern: /\b[a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@'"<>[\]]{0,256}:(?<v>(?!\[REDACTED)[^\s'"<>]{1,256})@(?=[^\s@'"<>/]{0,256}(?:[\s'"<>/?#]|$))/gi,
    group: "v",
    // host:port/path@x is a port, not a password.
    accept: (v) => !/^\d+(?:\/|$)/.test(v),
  },

  // Command lines of database, ssh and registry tools.
  { kind: "cli-password", pattern: /\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb(?:-dump|-admin)?)\b[^\n|;&]{0,256}?\s-p(?<v>[^\s'"-][^\s'"]*)/g, group: "v" },
  { kind: "cli-password", pattern: /\bsshpass\b(?:\s+-[a-oq-zA-Z]\S*)*\s+-p\s*(?<v>[^\s'"]+)/g, group: "v" },
  { kind: "cli-password", pattern: /\bredis-cli\b[^\n|;&]{0,256}?\s(?:-a|--pass|--askpass)\s+(?<v>[^\s'"]+)/g, group: "v" },
  { kind: "cli-password", pattern: /\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b[^\n|;&]{0,256}?\s-p\s+(?<v>[^\s'"-][^\s'"]*)/g, group: "v" },
  { kind: "cli-password", pattern: /\b(?:docker|podman|nerdctl|helm(?:\s+registry)?|oras|skopeo|buildah)\s+login\b[^\n|;&]{0,256}?\s-p\s+(?<v>[^\s'"-][^\s'"]*)/g, group: "v" },
  { kind: "cli-password", pattern: /\b(?:plink|pscp|psftp)\b[^\n|;&]{0,256}?\s-pw\s+(?<v>[^\s'"]+)/g, group: "v" },
  { kind: "cli-password", pattern: /\bcurl\b[^\n|;&]{0,256}?\s(?:-u|--user|--proxy-user)\s*['"]?[^\s:'"]*:(?<v>[^\s'"]+)/g, group: "v" },
  { kind: "cli-password", pattern: /\bsmbclient\b[^\n|;&]{0,256}?\s-U\s*['"]?[^\s%'"]+%(?<v>[^\s'"]+)/g, group: "v" },
  { kind: "cli-password", pattern: /-(?:passin|passout|pass)\s+pass:(?<v>[^\s'"]+)/g, group: "v" },
  { kind: "cli-password", pattern: /-(?:store|key|srcstore|deststore|srckey|destkey)pass\s+(?<v>[^\s'"]+)/g, group: "v" },
  {
    kind: "cli-password",
    pattern: /(?:^|\s)--?(?:[a-z]{1,20}-){0,4}(?:password|passwd|pass|pwd|passphrase|token|api-key|apikey|secret|secret-key|access-key|auth-token|client-secret)(?:=|\s+)(?<v>(?!\[REDACTED)[^\s'"-][^\s'"]{2,}|"[^"\n]{3,}"|'[^'\n]{3,}')/gi,
    group: "v",
    accept: (v) => !isPlaceholder(v),
  },

  // .netrc (machine h login u password p) and .pgpass (host:port:db:user:password).
  { kind: "netrc-password", pattern: /\b(?:machine\s+\S+|default)(?:\s+login\s+\S+)?(?:\s+account\s+\S+)?\s+password\s+(?<v>\S+)/g, group: "v" },
  { kind: "pgpass-password", pattern: /^(?:[A-Za-z0-9.*_-]+):(?:\d+|\*):[^\s:]+:[^\s:]+:(?<v>\S+)$/gm, group: "v" },

  // Container registry auth (~/.docker/config.json) and cluster configs (kubeconfig).
  { kind: "registry-auth", pattern: /"(?:auth|identitytoken|registrytoken)"\s*:\s*"(?<v>[A-Za-z0-9+/=_.-]{8,})"/gi, group: "v" },
  { kind: "kube-key", pattern: /\b(?:client-key-data|id-token|refresh-token|access-token)\s*:\s*["']?(?<v>[A-Za-z0-9+/=._-]{8,})/g, group: "v" },

  // Assignments: NAME=value, NAME: value, "name": "value", NAME := value.
  {
    kind: "secret",
    pattern: new RegExp(
      `(?<![A-Za-z0-9_.-])(?:${SECRET_NAME})\\b(?:["']?)\\s*(?::|=|:=|=>)\\s*(?<v>"[^"\\n]{3,}"|'[^'\\n]{3,}'|<[^>\\n]*>|\\$?\\{\\{[^}\\n]*\\}\\}|(?!\\[REDACTED)[^\\s,;"'\`)}\\]]{3,})`,
      "gi",
    ),
    group: "v",
    accept: (v, match) => !isPlaceholder(v) && !NOT_SECRET_NAME.test(match.slice(0, match.lastIndexOf(v))),
  },

  // A high-entropy string close after a word like secret, key, token or password ("the secret key is wJalr...").
  {
    kind: "secret",
    pattern: /\b(?:secrets?|keys?|tokens?|passwords?|passwd|passphrase|credentials?|apikey|api key)\b[^\n]{0,24}?(?<![A-Za-z0-9+/_=-])(?<v>[A-Za-z0-9+/_=-]{16,})(?![A-Za-z0-9+/_=-])/gi,
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
];

/** Values that only name a variable or a placeholder are not secrets. */
export function isPlaceholder(raw: string | undefined): boolean {
  if (!raw) return true;
  const quoted = /^["']/.test(raw);
  const v = raw.replace(/^["'`]|["'`]$/g, "").trim();
  return (
    // A bare word of letters only is a variable or a word of prose (token: string, secrets: passwords), not a credential.
    (!quoted && /^[A-Za-z]+$/.test(v)) ||
    /^[<$[{!(]/.test(v) || // <token>, !flag, (expr), ${TOKEN}, $TOKEN, {{ x }}, [REDACTED:...]
    /(?:…|\.\.\.)$/.test(v) || // sk-… in documentation
    /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(v) || // $VAR, ${VAR}
    /^\$\{\{[^}]*\}\}$/.test(v) || // ${{ secrets.X }}
    /^\{\{[^}]*\}\}$/.test(v) || // {{ .Values.x }}
    /^%[A-Za-z_]+%$/.test(v) ||
    /^(?:process\.env|os\.environ|env)[.[]/.test(v) ||
    (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(\)?)?$/.test(v) && !v.split(".").some((p) => randomLooking(p, 3))) || // var.tfc_token, config.db.password
    /^[A-Za-z_$][\w$.]*\(/.test(v) || // getenv("X"), read_secret(
    /^(?:\/|~\/|\.\.?\/)[\w.@/-]+$/.test(v) || // a file path: /run/secrets/db
    /^<[^>]*>$/.test(v) || // <token>
    /^(?:x+|\*+|\.\.\.|…|null|none|nil|undefined|true|false|string|number|int|bool|boolean|str|optional|required|yes|no|on|off|env|file|stdin|prompt|redacted|change-?me|change_me|example|your-[a-z-]+|with|and|the|for|from|to|in|of|is|as|on|at|by|or|not|when|if|then|was|are)$/i.test(v) ||
    /^\[REDACTED/.test(v) ||
    /^\d{1,7}(?:\.\d+)?$/.test(v) // counters and thresholds: max_tokens: 2000, MIN_SECRET_ENTROPY = 3.5
  );
}
