import { describe, expect, test } from "bun:test";
import { redact, redactOwn, redactSecrets } from "../../../../src/core/secrets";
import { LEARNINGS_SYSTEM_PROMPT } from "../../../../src/llm/learnings-prompt";
import { DISTILL_SYSTEM_PROMPT } from "../../../../src/llm/prompts";
import { CORPUS, NEAR_MISSES } from "../../../fixtures/secrets/corpus";
import { KNOWN_FIXTURE_SECRETS, ordinaryLines } from "../../../fixtures/secrets/ordinary";

describe("secrets are redacted", () => {
  const secrets: [string, string, string][] = [
    ["OpenAI key", "export OPENAI_API_KEY=sk-proj-abcDEF0123456789ghiJKL0123", "sk-proj-abcDEF0123456789ghiJKL0123"],
    ["Anthropic key", "key is sk-ant-api03-AbCdEf0123456789_xyz-QRS", "sk-ant-api03-AbCdEf0123456789_xyz-QRS"],
    ["classic OpenAI key", "use sk-0123456789abcdefABCDEF0123456789 for tests", "sk-0123456789abcdefABCDEF0123456789"],
    ["GitHub token", "git push https://ghp_0123456789abcdefABCDEF0123456789abcd@github.com/x/y", "ghp_0123456789abcdefABCDEF0123456789abcd"],
    ["GitHub fine-grained token", "GH=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"],
    ["AWS access key", "aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"],
    ["AWS secret assignment", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
    ["Slack bot token", "SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp"],
    ["Slack webhook", "post to https://hooks.slack.com/services/T000/B000/XXXXXXXX", "hooks.slack.com/services/T000/B000/XXXXXXXX"],
    [
      "JWT",
      "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    ],
    ["Bearer header", 'curl -H "Authorization: Bearer abc123def456ghi789" https://api', "abc123def456ghi789"],
    ["password in a URL", "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/app", "s3cr3t-Pa55"],
    ["password assignment", "password=hunter2!", "hunter2!"],
    ["quoted JSON secret", '{"client_secret": "0a1b2c3d4e5f"}', "0a1b2c3d4e5f"],
    ["YAML token", "api_token: tok_live_998877", "tok_live_998877"],
    ["CLI flag", "mysql --password=rootpw42 -u root", "rootpw42"],
    ["Stripe key", "STRIPE=sk_live_51Habcdefghij0123456789", "sk_live_51Habcdefghij0123456789"],
    ["Google API key", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA-1234567890abcdefghijklmnopqrstu"],
    ["npm token", "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789"],
  ];
  for (const [name, text, secret] of secrets) {
    test(name, async () => {
      const r = await redactSecrets(text);
      expect(r.text).not.toContain(secret);
      expect(r.text).toContain("[REDACTED:");
      expect(r.count).toBeGreaterThan(0);
    });
  }

  test("a private key block, complete or cut off", async () => {
    const block =
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAC3NzaC1lZDI1NTE5AAAAIB\n-----END OPENSSH PRIVATE KEY-----";
    expect(await redact(`here:\n${block}\ndone`)).toBe("here:\n[REDACTED:private-key]\ndone");
    const cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM\n[output truncated]";
    expect(await redact(cut)).toBe("[REDACTED:private-key]");
  });

  test("the user name and host of a URL stay, only the password goes", async () => {
    expect(await redact("postgres://app:s3cr3t@db:5432/x")).toBe("postgres://app:[REDACTED:password]@db:5432/x");
  });

  test("ordinary words, placeholders and counters are left alone", async () => {
    const text = [
      "The token bucket refills every second.",
      "Set password to ${DB_PASSWORD} in the compose file.",
      "api_key: <your key here>",
      "max_tokens: 2000",
      "token: string",
      "See https://example.com/docs for the secret handling policy.",
    ].join("\n");
    expect(await redactSecrets(text)).toEqual({ text, count: 0 });
  });

  test("redaction is idempotent", async () => {
    const once = await redact("password=hunter2 and Bearer abcdefghijkl and sk-proj-abcDEF0123456789ghiJKL0123");
    expect(await redact(once)).toBe(once);
  });
});

describe("the secret corpus", () => {
  test("holds at least 60 kinds, each with a near miss", () => {
    expect(new Set(CORPUS.map((c) => c.kind)).size).toBeGreaterThanOrEqual(60);
    for (const c of CORPUS) {
      expect(c.text).toContain(c.secret);
      expect(c.negative.length).toBeGreaterThan(0);
    }
  });

  for (const c of CORPUS) {
    test(`${c.kind}: redacted, and its near miss kept`, async () => {
      const r = await redactSecrets(c.text);
      expect(r.text).not.toContain(c.secret);
      expect(r.text).toMatch(/\[REDACTED:[a-z0-9-]+\]/);
      expect(r.count).toBeGreaterThan(0);
      expect(await redactSecrets(c.negative)).toEqual({ text: c.negative, count: 0 });
      // Idempotent: a second pass finds nothing more.
      expect((await redactSecrets(r.text)).count).toBe(0);
    });
  }

  test("commit SHAs, UUIDs, data URLs, checksums and long identifiers survive", async () => {
    for (const line of NEAR_MISSES) expect((await redactSecrets(line)).text).toBe(line);
  });

  test("the whole corpus in one text: every secret goes", async () => {
    const text = CORPUS.map((c) => c.text).join("\n");
    const r = await redactSecrets(text);
    for (const c of CORPUS) expect(r.text).not.toContain(c.secret);
  });

  test("under 1 % of ordinary coding-session lines are changed", async () => {
    const lines = ordinaryLines();
    expect(lines.length).toBeGreaterThan(500);
    const changed: string[] = [];
    for (const { line } of lines) {
      const r = await redactSecrets(line);
      if (r.text !== line && !KNOWN_FIXTURE_SECRETS.some((s) => line.includes(s))) changed.push(r.text);
    }
    expect(changed.length / lines.length).toBeLessThan(0.01);
  });
});

describe("how secrets are marked", () => {
  test("markers name the kind and keep the context", async () => {
    expect(await redact("machine h login u password p4ssw0rd")).toBe("machine h login u password [REDACTED:netrc-password]");
    expect(await redact("redis://:p@ss/w0rd@cache:6379/0")).toBe("redis://:[REDACTED:password]@cache:6379/0");
    expect(await redact("authorization: bearer abc123def456")).toBe("authorization: bearer [REDACTED:authorization]");
  });

  test("what only secretlint's preset knows is redacted too", async () => {
    // A Shopify partner token: our rules know shpat_ with hex, secretlint's preset any alphanumeric.
    const token = `shppa_${"Xy9".repeat(11)}`;
    const r = await redactSecrets(`x ${token}`);
    expect(r.text).not.toContain(token);
    expect(redactOwn(`x ${token}`).text).toContain(token);
  });

  test("our own system prompts pass the model client's redaction unchanged", async () => {
    for (const prompt of [DISTILL_SYSTEM_PROMPT, LEARNINGS_SYSTEM_PROMPT]) expect(await redactSecrets(prompt)).toEqual({ text: prompt, count: 0 });
  });

  test("a secretlint-disable comment in a transcript does not switch redaction off", async () => {
    const token = `shppa_${"Xy9".repeat(11)}`;
    const r = await redactSecrets(`// secretlint-disable\nx ${token}\n// secretlint-enable`);
    expect(r.text).not.toContain(token);
  });

  test("redaction leaves nothing behind per call (no performance marks)", async () => {
    // secretlint's engine left ~110 performance marks in the runtime's timeline per call, never
    // cleared, until its profiler was switched off; our host of its rules makes none.
    const before = performance.getEntriesByType("mark").length;
    for (let i = 0; i < 20; i++) await redactSecrets(`call ${i}: export OPENAI_API_KEY=sk-proj-abcDEF0123456789ghiJKL0123`);
    expect(performance.getEntriesByType("mark").length).toBe(before);
  });
});
