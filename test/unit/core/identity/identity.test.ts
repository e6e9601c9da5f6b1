import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, existsSync, fstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppError } from "../../../../src/errors";
import {
  agentView,
  getIdentity,
  globalView,
  identityForClient,
  identityMarkdown,
  knownAgents,
  putIdentity,
  resolveMode,
  type AgentIdentityView,
  type IdentityView,
} from "../../../../src/core/identity";
import { isValidName } from "../../../../src/core/identity";
import { memoryInstructions } from "../../../../src/core/identity";
import { IDENTITY_SECTION_MAX_BYTES } from "../../../../src/core/identity/tuning";
import { VERSION } from "../../../../src/version";
import { onPostgres } from "../../../helpers/engine";
import { makeServices, type TestServices, type TestServicesOptions } from "../../../helpers/services";

// These tests look at (or set up) the identity folder on disk: on PostgreSQL the
// sections live in identity_sections instead (test/http/identity.test.ts covers both engines).
const onFiles = test.skipIf(onPostgres);

const open: TestServices[] = [];
function services(opts: TestServicesOptions = {}): TestServices {
  const s = makeServices(opts);
  open.push(s);
  return s;
}
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

const id = (s: TestServices) => s.config.paths.identity;
function put(s: TestServices, sections: Record<string, unknown>, agent?: string) {
  return putIdentity(s, { sections }, agent === undefined ? {} : { agent });
}
async function caught(fn: () => unknown): Promise<AppError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("expected an AppError");
}
/** Every file under the identity folder with its content: "nothing written" means this is unchanged. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, entry);
    out[entry] = statSync(p).isDirectory() ? "<dir>" : readFileSync(p, "utf8");
  }
  return out;
}
const sectionsOf = (v: IdentityView | AgentIdentityView) => {
  const { memory: _memory, ...rest } = v.sections;
  return rest;
};

describe("names", () => {
  test("the allowlist accepts lowercase names up to 64 characters and nothing else", async () => {
    for (const ok of ["a", "0", "soul", "code-style", "tools_2", "a".repeat(64)]) expect(isValidName(ok)).toBe(true);
    for (const bad of ["", "A", "Soul", "-x", "_x", "a".repeat(65), "a/b", "../x", "..", "a.b", "a b", "é", "x\n", "memory/.."])
      expect(isValidName(bad)).toBe(false);
  });
});

describe("GET", () => {
  test("an empty home has only the synthetic memory section, no updated_at, resolved clients", async () => {
    const s = services({ config: { identityClients: [" Claude-Code ", "codex", "claude-code", ""] } });
    const v = await globalView(s);
    expect(Object.keys(v.sections)).toEqual(["memory"]);
    expect(v.updated_at).toBeNull();
    expect(v.clients).toEqual(["claude-code", "codex"]);
    expect(v.agents).toEqual({});
  });

  onFiles(
    "the memory section is product-owned, versioned, overrides memory.md and disappears when disabled [identity files: on PostgreSQL sections live in the database]",
    async () => {
      const on = services();
      mkdirSync(id(on), { recursive: true });
      writeFileSync(join(id(on), "memory.md"), "user text that must not show");
      const body = (await globalView(on)).sections.memory;
      expect(body).toBe(memoryInstructions());
      expect(body).toContain(VERSION);
      expect(body).toContain("## Memory recall (auto)");
      expect(body).toContain("(memory <short_id>, <date>, from <source_agent>)");
      expect(body).toContain("memsvc_get");
      expect((await globalView(on)).updated_at).toBeNull(); // the ignored file does not count

      const off = services({ config: { memoryInstructions: false } });
      mkdirSync(id(off), { recursive: true });
      writeFileSync(join(id(off), "memory.md"), "still not a section");
      writeFileSync(join(id(off), "soul.md"), "# Soul");
      expect((await globalView(off)).sections).toEqual({ soul: "# Soul" });
    },
  );

  onFiles(
    "sections come back exactly as on disk; updated_at is the newest mtime; odd files are skipped with a warning [identity files: on PostgreSQL sections live in the database]",
    async () => {
      const s = services();
      mkdirSync(id(s), { recursive: true });
      writeFileSync(join(id(s), "soul.md"), "I am *careful*.\n");
      writeFileSync(join(id(s), "tools.md"), "- bun\n");
      writeFileSync(join(id(s), "My Notes.md"), "invisible");
      writeFileSync(join(id(s), "notes.txt"), "not markdown");
      mkdirSync(join(id(s), "dir.md"));
      const v = await globalView(s);
      expect(sectionsOf(v)).toEqual({ soul: "I am *careful*.\n", tools: "- bun\n" });
      const newest = Math.max(statSync(join(id(s), "soul.md")).mtimeMs, statSync(join(id(s), "tools.md")).mtimeMs);
      expect(v.updated_at).toBe(new Date(newest).toISOString());
      expect(s.logs.some((l) => l.level === "warn" && l.message.includes("My Notes"))).toBe(true);
    },
  );

  test("project, limit or privacy are refused with a pointer to /recent", async () => {
    const s = services();
    for (const q of [{ project: "x" }, { limit: "5" }, { privacy: "WORK" }, { limit: "" }]) {
      const e = await caught(async () => await getIdentity(s, q));
      expect(e.code).toBe("invalid");
      expect(e.message).toContain("/recent");
    }
  });
});

describe("PUT", () => {
  onFiles(
    "partial upsert: named sections are written, others untouched, success body reports them [identity files: on PostgreSQL sections live in the database]",
    async () => {
      const s = services();
      await put(s, { soul: "one", tools: "two" });
      const r = await put(s, { tools: "two, edited" });
      expect(r).toEqual({ ok: true, written: ["tools"], updated_at: (await globalView(s)).updated_at });
      expect(r.updated_at).not.toBeNull();
      expect(readFileSync(join(id(s), "soul.md"), "utf8")).toBe("one");
      expect(readFileSync(join(id(s), "tools.md"), "utf8")).toBe("two, edited");
      expect(sectionsOf(await globalView(s))).toEqual({ soul: "one", tools: "two, edited" });
    },
  );

  test("one invalid name, the reserved name, a non-string or an oversized body: 400 and no file changes", async () => {
    const s = services();
    await put(s, { soul: "original" });
    const before = snapshot(id(s));
    const cases: [Record<string, unknown>, string][] = [
      [{ soul: "changed", "Bad Name": "x" }, "invalid"],
      [{ soul: "changed", "../escape": "x" }, "invalid"],
      [{ soul: "changed", ["a".repeat(65)]: "x" }, "invalid"],
      [{ soul: "changed", memory: "mine now" }, "reserved"],
      [{ soul: "changed", tools: 42 }, "invalid"],
      [{ soul: "changed", tools: null }, "invalid"],
      [{ soul: "changed", big: "x".repeat(IDENTITY_SECTION_MAX_BYTES + 1) }, "invalid"],
    ];
    for (const [sections, code] of cases) {
      const e = await caught(async () => await put(s, sections));
      expect(e.code).toBe(code as AppError["code"]);
      expect(e.message).toContain("nothing was written");
      expect(snapshot(id(s))).toEqual(before);
    }
    expect((await caught(async () => await put(s, { soul: "changed", "Bad Name": "x" }))).details).toEqual({ invalid_names: ["Bad Name"] });
  });

  test("a body at exactly the size limit is accepted (multi-byte characters counted as bytes)", async () => {
    const s = services();
    const euro = "€".repeat(Math.floor(IDENTITY_SECTION_MAX_BYTES / 3)); // 3 bytes each
    expect((await put(s, { big: euro })).written).toEqual(["big"]);
    expect((await caught(async () => await put(s, { big: `${euro}€€` }))).details).toMatchObject({ section: "big", limit: IDENTITY_SECTION_MAX_BYTES });
  });

  test("malformed bodies are 400: not an object, sections missing or an array, unknown fields", async () => {
    const s = services();
    for (const body of [null, "text", [], {}, { sections: [] }, { sections: "x" }, { sections: {}, agent: "bob" }]) {
      expect((await caught(async () => await putIdentity(s, body as never))).code).toBe("invalid");
    }
    expect(existsSync(id(s))).toBe(false);
  });

  onFiles(
    "when the Nth file cannot be replaced, the earlier files of the same PUT are rolled back [identity files: on PostgreSQL sections live in the database]",
    async () => {
      const s = services();
      await put(s, { alpha: "old alpha" });
      mkdirSync(join(id(s), "beta.md")); // a directory where beta's file should go
      const before = snapshot(id(s));
      const e = await caught(async () => await put(s, { alpha: "new alpha", beta: "b", gamma: "g", aardvark: "new file" }));
      expect(e.code).toBe("conflict");
      expect(e.message).toContain("beta.md");
      expect(snapshot(id(s))).toEqual(before); // alpha restored, aardvark removed, no temp or backup left
    },
  );

  onFiles("writes leave no temp files and replace a section file atomically [identity files: on PostgreSQL sections live in the database]", async () => {
    const s = services();
    await put(s, { soul: "v1".repeat(5000) });
    const file = join(id(s), "soul.md");
    // A reader that opened the old file must keep reading the whole old body:
    // replaced by rename(2) (a new inode), never truncated and rewritten in place.
    const reader = openSync(file, "r");
    const oldInode = statSync(file).ino;
    try {
      await put(s, { soul: "v2" });
      expect(statSync(file).ino).not.toBe(oldInode);
      expect(fstatSync(reader).ino).toBe(oldInode);
      expect(readFileSync(reader, "utf8")).toBe("v1".repeat(5000));
    } finally {
      closeSync(reader);
    }
    expect(readdirSync(id(s))).toEqual(["soul.md"]);
    expect(readFileSync(file, "utf8")).toBe("v2");
  });
});

describe("symlinks never lead outside the identity folder", () => {
  test("a section file linking outside is not read; writing it replaces the link, not the target", async () => {
    const s = services();
    const outside = mkdtempSync(join(tmpdir(), "memsvc-outside-"));
    writeFileSync(join(outside, "secret.txt"), "do not read");
    mkdirSync(id(s), { recursive: true });
    symlinkSync(join(outside, "secret.txt"), join(id(s), "leak.md"));
    expect((await globalView(s)).sections.leak).toBeUndefined();
    await put(s, { leak: "replaced" });
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("do not read");
    expect((await globalView(s)).sections.leak).toBe("replaced");
  });

  onFiles(
    "an agent folder (or agents/ itself) linking outside is ignored and refused for writing [identity files: on PostgreSQL sections live in the database]",
    async () => {
      const s = services();
      const outside = mkdtempSync(join(tmpdir(), "memsvc-outside-"));
      writeFileSync(join(outside, "soul.md"), "foreign");
      mkdirSync(join(id(s), "agents"), { recursive: true });
      symlinkSync(outside, join(id(s), "agents", "evil"));
      expect(await knownAgents(s)).toEqual({});
      expect(await resolveMode(s, "evil")).toBe("global");
      expect((await agentView(s, "evil")).sections.soul).toBeUndefined();
      expect((await caught(async () => await put(s, { soul: "x" }, "evil"))).code).toBe("conflict");
      expect(readdirSync(outside)).toEqual(["soul.md"]);

      const s2 = services();
      const outside2 = mkdtempSync(join(tmpdir(), "memsvc-outside-"));
      mkdirSync(id(s2), { recursive: true });
      symlinkSync(outside2, join(id(s2), "agents"));
      expect((await caught(async () => await put(s2, { soul: "x" }, "bob"))).code).toBe("conflict");
      expect(readdirSync(outside2)).toEqual([]); // not even an empty bob/ was created
    },
  );
});

describe("agent scopes", () => {
  async function withAgents() {
    const s = services({ config: { identityAgents: { quiet: "off", plain: "global", custom: "override" } } });
    await put(s, { soul: "global soul", tools: "global tools" });
    mkdirSync(join(id(s), "agents", "coder"), { recursive: true });
    writeFileSync(join(id(s), "agents", "coder", "tools.md"), "coder tools");
    writeFileSync(join(id(s), "agents", "coder", "extra.md"), "coder extra");
    mkdirSync(join(id(s), "agents", "plain"), { recursive: true });
    writeFileSync(join(id(s), "agents", "plain", "soul.md"), "plain's own, ignored");
    mkdirSync(join(id(s), "agents", "Bad Id"), { recursive: true });
    return s;
  }

  onFiles("mode: identityAgents first, then the agent's folder, then global [identity files: on PostgreSQL sections live in the database]", async () => {
    const s = await withAgents();
    expect(await knownAgents(s)).toEqual({ coder: "override", custom: "override", plain: "global", quiet: "off" });
    expect(await resolveMode(s, "stranger")).toBe("global");
    expect((await globalView(s)).agents).toEqual(await knownAgents(s));
  });

  onFiles(
    "override merges the agent's files over the global ones and reports origins [identity files: on PostgreSQL sections live in the database]",
    async () => {
      const s = await withAgents();
      const v = await agentView(s, "coder");
      expect(v.agent).toBe("coder");
      expect(v.mode).toBe("override");
      expect(sectionsOf(v)).toEqual({ extra: "coder extra", soul: "global soul", tools: "coder tools" });
      expect(v.origins).toEqual({ extra: "agent", soul: "global", tools: "agent", memory: "global" });
      expect(Object.keys(v.sections)).toEqual(["extra", "soul", "tools", "memory"]);
    },
  );

  test("global mode sees the global sections (its own folder ignored); off sees only the memory section", async () => {
    const s = await withAgents();
    const plain = (await getIdentity(s, { agent: "plain" })) as AgentIdentityView;
    expect(plain).toMatchObject({ agent: "plain", mode: "global" });
    expect(plain.origins).toBeUndefined();
    expect(sectionsOf(plain)).toEqual({ soul: "global soul", tools: "global tools" });
    const stranger = await agentView(s, "stranger");
    expect(stranger.mode).toBe("global");
    expect(sectionsOf(stranger)).toEqual(sectionsOf(await globalView(s)));
    const quiet = await agentView(s, "quiet");
    expect(quiet).toMatchObject({ agent: "quiet", mode: "off", updated_at: null });
    expect(Object.keys(quiet.sections)).toEqual(["memory"]);
    expect(quiet.clients).toEqual(["claude-code"]);
  });

  onFiles(
    "PUT with an agent writes to its folder, creating it and switching it to override [identity files: on PostgreSQL sections live in the database]",
    async () => {
      const s = await withAgents();
      const r = await put(s, { soul: "newbie soul" }, "newbie");
      expect(r).toMatchObject({ ok: true, written: ["soul"], agent: "newbie", mode: "override" });
      expect(readFileSync(join(id(s), "agents", "newbie", "soul.md"), "utf8")).toBe("newbie soul");
      expect(readFileSync(join(id(s), "soul.md"), "utf8")).toBe("global soul");
      expect((await agentView(s, "newbie")).origins).toMatchObject({ soul: "agent", tools: "global" });
      expect((await put(s, { x: "1" }, "custom")).mode).toBe("override"); // configured override, no folder yet
    },
  );

  test("PUT to an agent forced off or global by config is a 409 and writes nothing", async () => {
    const s = await withAgents();
    const before = snapshot(id(s));
    for (const agent of ["quiet", "plain"]) {
      const e = await caught(async () => await put(s, { soul: "x" }, agent));
      expect(e.code).toBe("conflict");
      expect(e.message).toContain("identityAgents");
    }
    expect(snapshot(id(s))).toEqual(before);
  });

  test("an invalid agent id is a 400 on both verbs, never a fall-through to global", async () => {
    const s = await withAgents();
    const before = snapshot(id(s));
    for (const agent of ["", "Bad Id", "../x", "a".repeat(65), "../../etc"]) {
      expect((await caught(async () => await getIdentity(s, { agent }))).code).toBe("invalid");
      expect((await caught(async () => await put(s, { soul: "x" }, agent))).code).toBe("invalid");
    }
    expect(snapshot(id(s))).toEqual(before);
  });
});

describe("Markdown for the tool and the session-start hook", () => {
  test("identityMarkdown: ### headings, one section by name, 404 for an unknown one", async () => {
    const s = services();
    await put(s, { soul: "Be kind.\n", tools: "Use bun." });
    const all = await identityMarkdown(s);
    expect(all.startsWith("### soul\n\nBe kind.\n\n### tools\n\nUse bun.\n\n### memory\n\n")).toBe(true);
    expect(await identityMarkdown(s, "tools")).toBe("### tools\n\nUse bun.");
    expect((await caught(async () => await identityMarkdown(s, "nope"))).code).toBe("not_found");
    expect((await caught(async () => await identityMarkdown(s, "No!"))).code).toBe("invalid");
  });

  test("identityMarkdown says exactly so when there are no sections", async () => {
    const s = services({ config: { memoryInstructions: false } });
    expect(await identityMarkdown(s)).toBe("No identity sections configured.");
  });

  test("identityForClient only for harnesses listed in identityClients, honouring the agent's mode", async () => {
    const s = services({ config: { identityClients: ["Claude-Code", "codex"], identityAgents: { quiet: "off" } } });
    await put(s, { soul: "Be kind." });
    const text = await identityForClient(s, "claude-code");
    expect(text).toContain("### soul\n\nBe kind.");
    expect(await identityForClient(s, "CODEX")).toBe(text);
    expect(await identityForClient(s, "cursor")).toBeNull();
    const quiet = (await identityForClient(s, "codex", "quiet"))!;
    expect(quiet).not.toContain("Be kind.");
    expect(quiet).toContain("### memory");
    const none = services({ config: { memoryInstructions: false, identityClients: ["codex"] } });
    expect(await identityForClient(none, "codex")).toBeNull();
  });
});
