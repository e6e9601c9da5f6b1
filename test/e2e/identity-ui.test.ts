import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { sectionStore } from "../../src/core/identity";
import { ARTIFACTS, hasChromium, launchBrowser } from "../helpers/browser";
import { onPostgres } from "../helpers/engine";
import { startServer, type TestServer } from "../helpers/server";
import type { TestServicesOptions } from "../helpers/services";

let browser: Browser | null = null;
let context: BrowserContext | null = null;
let srv: TestServer | null = null;
let proxy: net.Server | null = null;

beforeAll(async () => {
  if (hasChromium) browser = await launchBrowser();
  mkdirSync(ARTIFACTS, { recursive: true });
}, 60_000); // Chromium can be slow to start on a shared, busy machine

afterAll(async () => {
  await browser?.close();
}, 30_000);
afterEach(async () => {
  await context?.close();
  context = null;
  proxy?.close();
  proxy = null;
  await srv?.stop();
  srv = null;
}, 30_000);

const ID = () => srv!.services.config.paths.identity;
/**
 * Where the server keeps sections: the home's identity files on SQLite, the
 * database on PostgreSQL. A section is named as its file is ("soul.md",
 * "agents/coder/tools.md") on both.
 */
const sections = () => sectionStore(srv!.services, () => {});
function scopeOf(rel: string): [string | null, string] {
  const m = /^agents\/([^/]+)\/([^/]+)\.md$/.exec(rel);
  return m ? [m[1], m[2]] : [null, rel.replace(/\.md$/, "")];
}
async function writeSection(rel: string, body: string): Promise<void> {
  const [agent, name] = scopeOf(rel);
  if (!onPostgres) {
    // As a user would: a file in the folder, not a write through memsvc.
    mkdirSync(join(ID(), rel, ".."), { recursive: true });
    return writeFileSync(join(ID(), rel), body);
  }
  await sections().writeSections(agent, [[name, body]], Date.now());
}
async function sectionBody(rel: string): Promise<string | undefined> {
  const [agent, name] = scopeOf(rel);
  return (await sections().readScope(agent)).get(name)?.body;
}
/** Everything stored: every file and folder (temp files too) on SQLite, every section row on PostgreSQL. */
async function snapshot(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (onPostgres) {
    for (const agent of [null, ...(await sections().agentScopes())])
      for (const [name, f] of await sections().readScope(agent)) out[agent ? `agents/${agent}/${name}.md` : `${name}.md`] = f.body;
    return out;
  }
  const dir = ID();
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, entry);
    out[entry] = statSync(p).isDirectory() ? "<dir>" : readFileSync(p, "utf8");
  }
  return out;
}

/** What the last opened editor logged as errors and tried to fetch from elsewhere. */
let seen: { errors: string[]; outside: string[] } = { errors: [], outside: [] };

/** Starts the server with some global section files and opens the editor on it. */
async function openEditor(opts: TestServicesOptions & { files?: Record<string, string>; path?: string } = {}): Promise<Page> {
  srv = await startServer(opts);
  mkdirSync(ID(), { recursive: true });
  for (const [rel, body] of Object.entries(opts.files ?? { "soul.md": "# Soul\nOriginal text." })) await writeSection(rel, body);
  context = await browser!.newContext();
  seen = { errors: [], outside: [] };
  const origin = srv.url;
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) {
      seen.outside.push(url);
      return route.abort();
    }
    return route.continue();
  });
  const page = await context.newPage();
  page.on("pageerror", (e) => {
    seen.errors.push(e.message);
    console.error("page error:", e.message);
  });
  page.on("console", (m) => m.type() === "error" && seen.errors.push(m.text()));
  await page.goto(`${srv.url}${opts.path ?? "/identity/ui"}`);
  return page;
}
const tab = (page: Page, name: string) => page.locator(`#tabs [data-name="${name}"]`);
async function selected(page: Page, name: string) {
  await page.locator(`#tabs [data-name="${name}"][aria-selected="true"]`).waitFor();
}
function putsOf(page: Page): string[] {
  const seen: string[] = [];
  page.on("request", (r) => {
    if (r.method() === "PUT") seen.push(r.url());
  });
  return seen;
}

/**
 * A TCP relay whose upstream sockets leave from 127.0.0.2: the server sees a
 * non-localhost peer although Chromium connects to 127.0.0.1. (Pointing
 * Chromium at a server bound to 127.0.0.2 does not do this: Linux picks
 * 127.0.0.1 as the source address, so the peer still looks local.)
 */
async function remoteRelay(port: number): Promise<string> {
  proxy = net.createServer((client) => {
    const upstream = net.connect({ host: "127.0.0.1", port, localAddress: "127.0.0.2" });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
}

describe("identity editor in Chromium", () => {
  test.skipIf(!hasChromium)("load, edit, save; a reload shows the edit and the stored section changed", async () => {
    const page = await openEditor({ files: { "soul.md": "# Soul\nOriginal text.", "tools.md": "- bun" } });
    await selected(page, "soul");
    expect(await page.inputValue("#editor")).toBe("# Soul\nOriginal text.");
    expect(await page.locator("#preview h1").textContent()).toBe("Soul");
    expect(await page.locator("#save").isDisabled()).toBe(true);
    expect(await page.locator("#agent-form").isVisible()).toBe(false);
    expect(await page.locator("#mode").isVisible()).toBe(false);

    await page.fill("#editor", "# Soul\nEdited in the **browser**.");
    await tab(page, "soul").locator(".dirty").waitFor();
    expect(await page.locator("#preview strong").textContent()).toBe("browser");
    await page.click("#save");
    await page.locator("#status.ok").waitFor();
    expect(await page.locator("#status").textContent()).toContain("Saved “soul”");
    expect(await sectionBody("soul.md")).toBe("# Soul\nEdited in the **browser**.");
    expect(await sectionBody("tools.md")).toBe("- bun");

    await page.reload();
    await selected(page, "soul");
    expect(await page.inputValue("#editor")).toBe("# Soul\nEdited in the **browser**.");
    await page.screenshot({ path: join(ARTIFACTS, "identity-ui.png"), fullPage: true });
  });

  test.skipIf(!hasChromium)("an invalid new section name is refused on the page with a message, and nothing is sent or written", async () => {
    const page = await openEditor();
    await selected(page, "soul");
    const puts = putsOf(page);
    const before = await snapshot();
    const cases: [string, string][] = [
      ["Bad Name", "lowercase"],
      ["-dash", "starting with"],
      ["a".repeat(65), "at most 64"],
      ["memory", "reserved"],
      ["soul", "already exists"],
      ["", "Enter a section name"],
    ];
    for (const [name, message] of cases) {
      await page.fill("#new-name", name);
      await page.click("#new-add");
      expect(await page.locator("#new-error").textContent()).toContain(message);
      expect(await page.locator("#new-error").isVisible()).toBe(true);
      expect(await page.locator("#tabs [role=tab]").count()).toBe(2); // soul + memory
    }
    expect(puts).toEqual([]);
    expect(await snapshot()).toEqual(before);

    await page.fill("#new-name", "code-style");
    await page.click("#new-add");
    await selected(page, "code-style");
    expect(await page.locator("#new-error").textContent()).toBe("");
    await page.fill("#editor", "Prefer small functions.");
    await page.click("#save");
    await page.locator("#status.ok").waitFor();
    expect(await sectionBody("code-style.md")).toBe("Prefer small functions.");
  });

  test.skipIf(!hasChromium)("a body the server rejects (too large) shows its 400 message and changes nothing", async () => {
    const page = await openEditor();
    await selected(page, "soul");
    await page.locator("#editor").evaluate((ta: HTMLTextAreaElement) => {
      ta.value = "x".repeat(300 * 1024);
      ta.dispatchEvent(new Event("input"));
    });
    await page.click("#save");
    await page.locator("#status.error").waitFor();
    expect(await page.locator("#status").textContent()).toContain("the limit is");
    expect(await sectionBody("soul.md")).toBe("# Soul\nOriginal text.");
  });

  test.skipIf(!hasChromium)("the read-only memory tab cannot be saved", async () => {
    const page = await openEditor();
    await selected(page, "soul");
    const puts = putsOf(page);
    await tab(page, "memory").click();
    await selected(page, "memory");
    expect(await tab(page, "memory").textContent()).toContain("read-only");
    expect(await page.locator("#save").isVisible()).toBe(false);
    expect(await page.locator("#save").isDisabled()).toBe(true);
    expect(await page.locator("#editor").getAttribute("readonly")).not.toBeNull();
    expect(await page.locator("#notice").textContent()).toContain("Read-only");
    const original = await page.inputValue("#editor");
    expect(original).toContain("## Memory recall (auto)");
    await page.locator("#editor").click();
    await page.keyboard.type("tampering");
    await page.keyboard.press("Control+s");
    expect(await page.inputValue("#editor")).toBe(original);
    expect(puts).toEqual([]);
    // and the server refuses it even if asked directly
    const status = await page.evaluate(async () => {
      const r = await (window as any).memsvc.api("/identity", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sections: { memory: "x" } }),
      });
      return r.status;
    });
    expect(status).toBe(400);
    expect((await sectionBody("memory.md")) !== undefined).toBe(false);
  });

  test.skipIf(!hasChromium)("unsaved changes: switching tabs asks first, leaving the page warns", async () => {
    const page = await openEditor({ files: { "soul.md": "soul", "tools.md": "tools" } });
    await selected(page, "soul");
    await page.fill("#editor", "soul, edited");
    const dialogs: string[] = [];
    page.once("dialog", (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`);
      void d.dismiss();
    });
    await tab(page, "tools").click();
    expect(dialogs).toEqual(["confirm: Discard unsaved changes to “soul”?"]);
    await selected(page, "soul");
    expect(await page.inputValue("#editor")).toBe("soul, edited");

    page.once("dialog", (d) => {
      dialogs.push(d.type());
      void d.accept();
    });
    await tab(page, "tools").click();
    await selected(page, "tools");
    await tab(page, "soul").click();
    expect(await page.inputValue("#editor")).toBe("soul"); // the discarded edit is gone
    expect(await sectionBody("soul.md")).toBe("soul");

    await page.fill("#editor", "edited again");
    const unload = new Promise<string>((resolve) =>
      page.once("dialog", (d) => {
        resolve(d.type());
        void d.accept();
      }),
    );
    await page.close({ runBeforeUnload: true });
    expect(await unload).toBe("beforeunload");
  });

  test.skipIf(!hasChromium)("agent scope: origins in override mode, saving creates an override, 409 for a forced agent", async () => {
    const page = await openEditor({
      config: { identityAgents: { quiet: "off" } },
      files: { "soul.md": "global soul", "tools.md": "global tools", "agents/coder/tools.md": "coder tools" },
    });
    await selected(page, "soul");
    await page.selectOption("#scope", "coder");
    await page.locator("#mode.mode-override").waitFor();
    expect(new URL(page.url()).searchParams.get("agent")).toBe("coder");
    await selected(page, "soul");
    expect(await tab(page, "soul").locator(".tag").textContent()).toBe("global");
    expect(await tab(page, "tools").locator(".tag").textContent()).toBe("agent");
    expect(await page.locator("#notice").textContent()).toContain("Inherited from the global scope");
    await page.screenshot({ path: join(ARTIFACTS, "identity-ui-agent.png"), fullPage: true });

    await page.fill("#editor", "coder soul");
    await page.click("#save");
    await page.locator("#status.ok").waitFor();
    expect(await sectionBody("agents/coder/soul.md")).toBe("coder soul");
    expect(await sectionBody("soul.md")).toBe("global soul");
    await page.waitForFunction(() => document.querySelector('#tabs [data-name="soul"] .tag')?.textContent === "agent");

    await page.selectOption("#scope", "quiet");
    await page.locator("#mode.mode-off").waitFor();
    expect(await page.locator("#tabs [role=tab]").count()).toBe(1); // memory only
    await page.fill("#new-name", "notes");
    await page.click("#new-add");
    await page.fill("#editor", "should not land");
    await page.click("#save");
    await page.locator("#status.error").waitFor();
    expect(await page.locator("#status").textContent()).toContain("Not saved (conflict)");
    expect(await sections().hasAgentScope("quiet")).toBe(false);

    // a new agent through "Other agent…": the id is checked before anything is sent
    await page.selectOption("#scope", "__other__");
    await page.fill("#agent-name", "Not Valid");
    await page.click("#agent-form button[type=submit]");
    expect(await page.locator("#agent-error").textContent()).toContain("lowercase");
  });

  test.skipIf(!hasChromium)("the preview renders Markdown but never the page's own HTML or script links", async () => {
    const page = await openEditor({
      files: {
        "soul.md":
          '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script>\n\n[bad](javascript:window.__xss=3) [good](https://example.org/a?b=1&c=2)\n\n- item `<b>code</b>`',
      },
    });
    await selected(page, "soul");
    const preview = page.locator("#preview");
    expect(await preview.locator("img, script, b").count()).toBe(0);
    expect(await preview.textContent()).toContain('<img src=x onerror="window.__xss=1">');
    expect(await preview.locator("a[href]").count()).toBe(1);
    expect(await preview.locator("a[href]").getAttribute("href")).toBe("https://example.org/a?b=1&c=2");
    expect(await preview.locator("li code").textContent()).toBe("<b>code</b>");
    expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined();

    // Rendered by marked + DOMPurify (shared with the memory browser), no longer by hand.
    const html = await page.evaluate(() =>
      (window as any).memsvcIdentity.renderMarkdown(
        "## Title\n\n1. one\n2. two\n\n> quoted *soft*\n\n```\n<tag> & **not bold**\n```\n\n---\nsnake_case_name and __bold__",
      ),
    );
    for (const part of [
      "<h2>Title</h2>",
      "<li>one</li>",
      "<blockquote>",
      "<em>soft</em>",
      "<pre><code>&lt;tag&gt; &amp; **not bold**\n</code></pre>",
      "<hr>",
      "snake_case_name and <strong>bold</strong>",
    ]) {
      expect(html).toContain(part);
    }
  });

  test.skipIf(!hasChromium)("Markdown tables and task lists render (not raw pipes); Save stays in reach on long sections, laptop and phone", async () => {
    const long = ["# Tools", "", "| tool | use |", "|---|---|", "| bun | runtime |", "| sqlite | store |", "", "- [x] done", "- [ ] open", ""];
    for (let i = 0; i < 150; i++) long.push(`Line ${i} of a long section about how this agent works.`, "");
    const page = await openEditor({ files: { "soul.md": long.join("\n") } });
    await selected(page, "soul");
    const preview = page.locator("#preview");
    expect(await preview.locator("table td").first().textContent()).toBe("bun");
    expect(await preview.textContent()).not.toContain("|---|");
    expect(await preview.locator("input[type=checkbox]").count()).toBe(2);
    for (const [name, viewport] of [
      ["laptop", { width: 1440, height: 900 }],
      ["phone", { width: 390, height: 844 }],
    ] as const) {
      await page.setViewportSize(viewport);
      expect(await page.title()).toBe("Identity · memsvc");
      for (const where of ["top", "middle"]) {
        if (where === "middle") await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
        const box = (await page.locator("#save").boundingBox())!;
        expect({ name, where, inView: box.y >= 0 && box.y + box.height <= viewport.height }).toEqual({ name, where, inView: true });
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(ARTIFACTS, `identity-${name}.png`) });
      await page.evaluate(() => window.scrollTo(0, 0));
    }
    expect(seen.errors).toEqual([]);
    expect(seen.outside).toEqual([]);
  });

  test.skipIf(!hasChromium)("dark mode keeps text readable", async () => {
    const page = await openEditor();
    await page.emulateMedia({ colorScheme: "dark" });
    await selected(page, "soul");
    const [bg, fg] = await page.evaluate(() => {
      const lum = (c: string) => {
        const [r, g, b] = (c.match(/\d+/g) ?? [])
          .map(Number)
          .map((v) => v / 255)
          .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const style = getComputedStyle(document.body);
      return [lum(style.backgroundColor), lum(style.color)];
    });
    expect(bg).toBeLessThan(0.05);
    expect((fg + 0.05) / (bg + 0.05)).toBeGreaterThan(7); // WCAG AAA contrast
    await page.screenshot({ path: join(ARTIFACTS, "identity-ui-dark.png"), fullPage: true });
  });
});

describe("identity editor from a remote peer", () => {
  test.skipIf(!hasChromium)("?token= is taken out of the address bar, kept in localStorage and used", async () => {
    srv = await startServer();
    await writeSection("soul.md", "remote soul");
    const base = await remoteRelay(srv.port);
    context = await browser!.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/identity/ui?token=${srv.token}&agent=coder`);
    await selected(page, "soul");
    const url = new URL(page.url());
    expect(url.searchParams.get("token")).toBeNull();
    expect(url.searchParams.get("agent")).toBe("coder");
    expect(await page.evaluate(() => localStorage.getItem("memsvc.token"))).toBe(srv.token);
    expect(await page.inputValue("#editor")).toBe("remote soul");
  });

  test.skipIf(!hasChromium)("without a token the page prompts; a wrong token is refused, the right one loads and saves", async () => {
    srv = await startServer();
    await writeSection("soul.md", "remote soul");
    const base = await remoteRelay(srv.port);
    context = await browser!.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/identity/ui`);
    const dialog = page.locator("#memsvc-token-dialog");
    await dialog.waitFor();
    expect(await dialog.locator(".msg").textContent()).toContain("needs its bearer token");
    await dialog.locator("input").fill("wrong-token");
    await dialog.locator("#memsvc-token-ok").click();
    await page.waitForFunction(() => document.querySelector("#memsvc-token-dialog .msg")?.textContent?.includes("refused"));
    await dialog.locator("input").fill(srv.token);
    await dialog.locator("#memsvc-token-ok").click();
    await selected(page, "soul");
    expect(await page.evaluate(() => localStorage.getItem("memsvc.token"))).toBe(srv.token);
    await page.fill("#editor", "saved from afar");
    await page.click("#save");
    await page.locator("#status.ok").waitFor();
    expect(await sectionBody("soul.md")).toBe("saved from afar");
  });
});
