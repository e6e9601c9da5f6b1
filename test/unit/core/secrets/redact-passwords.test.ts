import { describe, expect, test } from "bun:test";
import { adversarialInputs } from "../../../../bench/lib/adversarial";
import { redact, redactOwn, redactSecrets } from "../../../../src/core/secrets";
import { PASSWORD_FORMS, PASSWORD_NEAR_MISSES } from "../../../fixtures/secrets/password-forms";

// Issue 39: passwords given on command lines and said in words.
describe("passwords on command lines and in words", () => {
  test("the corpus holds at least 40 forms of both classes and 150 near misses", () => {
    expect(PASSWORD_FORMS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(PASSWORD_FORMS.map((f) => f.class))).toEqual(new Set(["command-line", "prose"]));
    expect(PASSWORD_NEAR_MISSES.length).toBeGreaterThanOrEqual(150);
    for (const f of PASSWORD_FORMS) expect(f.text).toContain(f.written);
  });

  for (const f of PASSWORD_FORMS) {
    test(`${f.class}: ${f.family}: only the password goes`, async () => {
      const r = await redactSecrets(f.text);
      expect(r.text).toMatch(f.expected);
      expect(r.text).not.toContain(f.secret);
      expect(r.count).toBeGreaterThan(0);
      // The capture client's own pass (our rules alone) already takes it, and a second pass finds nothing more.
      expect(redactOwn(f.text).text).toMatch(f.expected);
      expect((await redactSecrets(r.text)).count).toBe(0);
    });
  }

  test("inside a JSON string (a tool call's input as a transcript stores it) the password goes too", async () => {
    for (const f of PASSWORD_FORMS) {
      const r = await redact(JSON.stringify({ command: f.text }));
      expect({ family: f.family, leaked: r.includes(JSON.stringify(f.secret).slice(1, -1)) }).toEqual({ family: f.family, leaked: false });
    }
  });

  test("every near miss comes through unchanged", async () => {
    const changed: string[] = [];
    for (const line of PASSWORD_NEAR_MISSES) if ((await redactSecrets(line)).text !== line) changed.push(line);
    expect(changed).toEqual([]);
  });

  test("all forms in one text: every password goes, every line keeps its words", async () => {
    const r = await redact(PASSWORD_FORMS.map((f) => f.text).join("\n"));
    for (const f of PASSWORD_FORMS) expect(r).not.toContain(f.secret);
    expect(r).toContain("sshpass -p [REDACTED:cli-password] ssh deploy@10.0.0.5");
    expect(r).toContain("the root password is [REDACTED:password]");
  });

  test("a word that names the password instead of being it stays: variables, substitutions, masks, stdin", async () => {
    for (const line of [
      'sshpass -p "$DEPLOY_PW" ssh deploy@h',
      "mysql -u root -p$(cat ~/.dbpw) shop",
      "docker login -u ci -p ${{ secrets.CI_PW }} ghcr.io",
      "curl -u admin:*** https://h",
      "net use Z: \\\\nas\\share * /user:dana",
      "the password is ********",
    ]) {
      expect(await redact(line)).toBe(line);
    }
  });

  test("quoting is read the way a shell reads it: the whole word goes, and what follows it stays", async () => {
    expect(await redact(`sshpass -p 'a b' -P assword ssh h`)).toBe("sshpass -p [REDACTED:cli-password] -P assword ssh h");
    expect(await redact(`sshpass -p "a\\" b" ssh h`)).toBe("sshpass -p [REDACTED:cli-password] ssh h");
    expect(await redact(`sshpass -p $'a\\' b' ssh h`)).toBe("sshpass -p [REDACTED:cli-password] ssh h");
    expect(await redact(`sshpass -p a\\ b\\ c ssh h`)).toBe("sshpass -p [REDACTED:cli-password] ssh h");
    expect(await redact(`sshpass -p pre'quoted mid'post ssh h`)).toBe("sshpass -p [REDACTED:cli-password] ssh h");
    // A JSON-escaped command keeps its closing escape.
    expect(await redact(`{"cmd":"mysql -pR00tPw9\\"}`)).toBe(`{"cmd":"mysql -p[REDACTED:cli-password]\\"}`);
  });

  test("the value test of words: digits are a PIN before nothing, a number before a unit", async () => {
    expect(await redact("the pin is 4821 for the door")).toBe("the pin is [REDACTED:password] for the door");
    expect(await redact("the pin is 4821 digits long")).toBe("the pin is 4821 digits long");
    expect(await redact("the token is 123456")).toBe("the token is 123456");
    expect(await redact("the password is 12:30")).toBe("the password is 12:30");
  });
});

describe("redaction stays linear on backtracking bait", () => {
  // Each bait (bench/lib/adversarial.ts) at 50 and 200 kB: a quadratic rule would take 16 times as long for 4
  // times the text; linear ones take about 4. The best of three runs each, slack for a busy machine, and
  // up to four tries of a bait that looks slow.
  test("four times the text costs under eight times the time, for every bait", async () => {
    const small = adversarialInputs(50_000);
    const large = adversarialInputs(200_000);
    const best = async (text: string) => {
      let ms = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        await redactSecrets(text);
        ms = Math.min(ms, performance.now() - t);
      }
      return ms;
    };
    const slow: string[] = [];
    for (const name of Object.keys(small)) {
      // A load spike can hit one size and not the other; a quadratic rule is slow on every try.
      let last = "";
      for (let attempt = 0; attempt < 4; attempt++) {
        const [a, b] = [await best(small[name]), await best(large[name])];
        last = b > 8 * a + 25 ? `${name}: ${a.toFixed(1)} ms at 50 kB, ${b.toFixed(1)} ms at 200 kB (4 tries)` : "";
        if (!last) break;
      }
      if (last) slow.push(last);
    }
    expect(slow).toEqual([]);
  }, 120_000);
});
