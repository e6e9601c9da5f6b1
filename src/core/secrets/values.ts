/**
 * Tests on a candidate secret, shared by the rule files (rules.ts,
 * command-line.ts, prose.ts): is it random-looking, credential-like, or only
 * a variable, a placeholder or a word?
 */

export interface SecretRule {
  kind: string;
  pattern: RegExp;
  /**
   * Named group holding the secret; only it is replaced and the rest of the
   * match (key names, user names, hosts, flags, quotes) stays. Without it the
   * whole match goes. A pattern whose alternatives each capture the secret
   * names them v, v1, v2, v3: the first that took part in the match counts.
   */
  group?: "v";
  /**
   * Extra test on the secret (and the whole match, and up to 40 characters of
   * the text after it), for patterns that also match ordinary words.
   */
  accept?: (value: string, match: string, after: string) => boolean;
  /** A cheap pattern the text must hold for the rule to match at all: without it the rule is skipped. */
  needle?: RegExp;
  /** Like needle, shared by a whole family of rules (tested once a call, before the rule's own needle). */
  gate?: RegExp;
}

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
export function credentialLike(v: string): boolean {
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
    /^[A-Za-z_$][\w$.]*[([]/.test(v) || // getenv("X"), read_secret(, tokens[0]
    /^(?:\/|~\/|\.\.?\/)[\w.@/-]+$/.test(v) || // a file path: /run/secrets/db
    /^<[^>]*>$/.test(v) || // <token>
    /^(?:x+|\*+|\.\.\.|…|null|none|nil|undefined|true|false|string|number|int|bool|boolean|str|optional|required|yes|no|on|off|env|file|stdin|prompt|redacted|change-?me|change_me|example|n\/a|tbd|todo|your-[a-z-]+|with|and|the|for|from|to|in|of|is|as|on|at|by|or|not|when|if|then|was|are)$/i.test(
      v,
    ) ||
    /^\[REDACTED/.test(v) ||
    /^\d{1,7}(?:\.\d+)?$/.test(v) // counters and thresholds: max_tokens: 2000, MIN_SECRET_ENTROPY = 3.5
  );
}
