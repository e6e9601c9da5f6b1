import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { counted, plural } from "../../../../src/core/text";
import { parseSections } from "../../../../src/core/identity/identity";

const SRC = join(import.meta.dir, "../../../../src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** String and template literals of a line, `${...}` holes blanked (code inside them is not message text). */
function literals(line: string): string[] {
  return (line.match(/`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"/g) ?? []).map((l) => l.replace(/\$\{[^{}]*(\{[^{}]*\}[^{}]*)*\}/g, "_"));
}

describe("counts read as English", () => {
  test("counted and plural", () => {
    expect(counted(0, "memory", "memories")).toBe("0 memories");
    expect(counted(1, "memory", "memories")).toBe("1 memory");
    expect(counted(2, "ignored memory", "ignored memories")).toBe("2 ignored memories");
    expect(counted(1, "session")).toBe("1 session");
    expect(plural(1, "field")).toBe("field");
    expect(plural(3, "field")).toBe("fields");
  });

  test('no message in src/ hedges with "(s)": it says "1 segment" or "2 segments"', () => {
    const hits: string[] = [];
    for (const file of sources(SRC)) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
          // "http(s)" names two schemes, not a count.
          for (const lit of literals(line))
            if (/[a-z]\(s\)/i.test(lit.replaceAll("http(s)", ""))) hits.push(`${relative(SRC, file)}:${i + 1}: ${lit.slice(0, 120)}`);
        });
    }
    expect(hits).toEqual([]);
  });

  test("one unknown field or bad name is named in the singular, several in the plural", () => {
    const message = (body: unknown) => {
      try {
        parseSections(body);
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    };
    expect(message({ sections: {}, agent: "bob" })).toStartWith("unknown field agent: ");
    expect(message({ sections: {}, agent: "bob", project: "x" })).toStartWith("unknown fields agent, project: ");
    expect(message({ sections: { "Bad Name": "x" } })).toStartWith('invalid section name "Bad Name": ');
    expect(message({ sections: { "Bad Name": "x", "also bad": "y" } })).toStartWith('invalid section names "Bad Name", "also bad": ');
  });
});
