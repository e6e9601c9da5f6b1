import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { anchors, brokenLinks, links, slug } from "../../helpers/doc-links";

const root = resolve(import.meta.dir, "../../..");

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownUnder(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : [],
  );
}

const docs = markdownUnder(join(root, "docs"));
const readme = readFileSync(join(root, "README.md"), "utf8");

describe("README.md and docs/", () => {
  test("every relative link names a file that exists and a heading it has", () => {
    const broken = brokenLinks(root, [join(root, "README.md"), ...docs]);
    expect(broken.map((b) => `${b.file}:${b.line} ${b.target}: ${b.reason}`)).toEqual([]);
  });

  test("the index links every page of docs/; a folder's README links every page in it", () => {
    const linkedFrom = (readme: string) => new Set(links(readFileSync(join(root, readme), "utf8")).map((l) => l.target.split("#")[0]));
    const index = linkedFrom("docs/README.md");
    const pages = docs.map((f) => f.slice(join(root, "docs").length + 1)).filter((f) => f !== "README.md");
    expect(pages.length).toBeGreaterThanOrEqual(10);
    // Top-level pages and each folder's own README from docs/README.md; a folder's pages from that README.
    const orphans = pages.filter((p) => {
      const slash = p.lastIndexOf("/");
      if (slash < 0 || p.endsWith("/README.md")) return !index.has(p);
      return !linkedFrom(`docs/${p.slice(0, slash)}/README.md`).has(p.slice(slash + 1));
    });
    expect(orphans).toEqual([]);
  });

  test("the README is a front door: short lines, at most 250 of them, and CI's test command", () => {
    const lines = readme.split("\n");
    expect(lines.length).toBeLessThanOrEqual(250);
    expect(lines.filter((l) => l.length > 160)).toEqual([]);
    // .ci/run runs "the README's test command".
    expect(readme).toContain("npm install && npm test");
  });

  test.each(["## Install", "## Set up", "## A five-minute tour"])("%s holds a sh block", (heading) => {
    const lines = readme.split("\n");
    const start = lines.indexOf(heading);
    expect(start).toBeGreaterThanOrEqual(0);
    const next = lines.findIndex((l, i) => i > start && l.startsWith("## "));
    const section = lines.slice(start, next === -1 ? undefined : next);
    expect(section).toContain("```sh");
  });
});

describe("the link check itself", () => {
  test("anchors follow GitHub's rules, repeats numbered", () => {
    expect(slug("Moving a laptop store to PostgreSQL (`memsvc migrate`)")).toBe("moving-a-laptop-store-to-postgresql-memsvc-migrate");
    expect(slug("GET /memory/history, POST /memory/restore")).toBe("get-memoryhistory-post-memoryrestore");
    expect(slug("/viz: the knowledge-graph page")).toBe("viz-the-knowledge-graph-page");
    expect(slug("Set up (`memsvc setup`)")).toBe("set-up-memsvc-setup");
    expect(slug("`memsvc hook <event>`")).toBe("memsvc-hook-event");
    expect([...anchors("# A\n\n## Tools\n\n```\n# not a heading\n```\n\n## Tools\n")]).toEqual(["a", "tools", "tools-1"]);
  });

  test("finds a missing file, a missing anchor, and ignores links in code and web links", () => {
    const dir = mkdtempSync(join(tmpdir(), "memsvc-doclinks-"));
    try {
      mkdirSync(join(dir, "docs"));
      writeFileSync(join(dir, "docs/a.md"), "# A\n\n## Real part\n");
      writeFileSync(
        join(dir, "README.md"),
        [
          "# Top",
          "[ok](docs/a.md#real-part) [ok too](#top) [web](https://example.com/x#y)",
          "[gone](docs/b.md) [no anchor](docs/a.md#unreal-part) [own](#nowhere)",
          "`[in code](docs/missing.md)`",
          "```",
          "[in a block](docs/missing.md)",
          "```",
          "[escape](../outside.md)",
        ].join("\n"),
      );
      const broken = brokenLinks(dir, [join(dir, "README.md"), join(dir, "docs/a.md")]);
      expect(broken.map((b) => [b.line, b.target])).toEqual([
        [3, "docs/b.md"],
        [3, "docs/a.md#unreal-part"],
        [3, "#nowhere"],
        [8, "../outside.md"],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
