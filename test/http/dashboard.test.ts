import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EXPECTED, movableClock, NOW, seedDashboard } from "../helpers/dashboard-seed";
import { requestFrom, startServer, type TestServer } from "../helpers/server";

const clock = movableClock();
let srv: TestServer;
beforeAll(async () => {
  srv = await startServer({ hostname: "0.0.0.0", now: clock.now, config: { displayName: "Ada", orgName: "Analytical Engines" } });
  await seedDashboard(srv.services, clock);
});
afterAll(async () => {
  await srv.stop();
});

const remote = (path: string, headers: Record<string, string> = {}, method = "GET") => requestFrom("127.0.0.2", `${srv.url}${path}`, { headers, method });
const local = (path: string, headers: Record<string, string> = {}, method = "GET") => requestFrom("127.0.0.1", `${srv.url}${path}`, { headers, method });
const auth = () => ({ authorization: `Bearer ${srv.token}` });

describe("GET /account and GET /dashboard/data need the token from a remote peer (127.0.0.2)", () => {
  for (const path of ["/account", "/dashboard/data", "/dashboard/data?days=7"]) {
    test(`${path}: 401 without or with a wrong token, 200 with it`, async () => {
      const none = await remote(path);
      expect(none.status).toBe(401);
      expect(none.json().error.code).toBe("unauthorized");
      expect(none.body).not.toContain("Analytical");
      const wrong = await remote(path, { authorization: "Bearer nope" });
      expect(wrong.status).toBe(401);
      expect((await remote(`${path}${path.includes("?") ? "&" : "?"}token=${srv.token}`)).status).toBe(401);
      expect((await remote(path, auth())).status).toBe(200);
    });
  }

  test("from localhost no token is needed", async () => {
    expect((await local("/account")).status).toBe(200);
    expect((await local("/dashboard/data")).status).toBe(200);
  });
});

describe("response shapes", () => {
  test("GET /account: {account: {name, org, plan}}, null for an absent key", async () => {
    const res = await remote("/account", auth());
    expect(res.headers["content-type"]).toContain("application/json");
    expect(res.json()).toEqual({ account: { name: "Ada", org: "Analytical Engines", plan: null } });
  });

  test("GET /dashboard/data: every member, with the seeded figures", async () => {
    const d = (await remote("/dashboard/data", auth())).json();
    expect(Object.keys(d).sort()).toEqual([
      "account",
      "backlog",
      "counts",
      "domains",
      "generated_at",
      "growth",
      "nightly",
      "recall",
      "receipts",
      "scope",
      "window",
    ]);
    // Every project: no scope (a project-scoped token's answer names its projects).
    expect(d.scope).toBeNull();
    // No capture ran in this home: nothing waits.
    expect(d.backlog).toEqual({ total: 0, noModel: 0, modelFailed: 0, noServer: 0 });
    expect(d.generated_at).toBe(new Date(NOW).toISOString());
    expect(d.window).toEqual(EXPECTED.window);
    expect(d.counts).toEqual(EXPECTED.counts);
    expect(d.account).toEqual({ name: "Ada", org: "Analytical Engines", plan: null });
    expect(d.domains).toEqual(EXPECTED.domains);
    expect(d.growth.base).toBe(3);
    expect(d.growth.days).toHaveLength(30);
    expect(Object.keys(d.growth.days[0]).sort()).toEqual(["added", "by_type", "day", "total"]);
    expect(d.growth.days.at(-1)).toEqual({ day: "2026-03-15", added: 3, by_type: { knowledge: 1, experience: 1, decisions: 0, learnings: 1 }, total: 12 });
    expect(d.recall).toMatchObject({ showings: 13, uses: 6, uses_per_showing: 0.462, never_shown_share: 0.333, never_used_share: 0.667 });
    expect(d.recall.days.at(-2)).toEqual({ day: "2026-03-14", showings: 3, uses: 2, uses_per_showing: 0.667 });
    expect(d.recall.days[0]).toEqual({ day: "2026-02-14", showings: 0, uses: 0, uses_per_showing: null });
    expect(d.nightly.map((n: { day: string }) => n.day)).toEqual(EXPECTED.nightlyDays);
  });

  test("?days= is checked: 400 with a message, never a 500", async () => {
    for (const bad of ["abc", "0", "-1", "1.5"]) {
      const res = await remote(`/dashboard/data?days=${bad}`, auth());
      expect(res.status).toBe(400);
      expect(res.json().error).toEqual({ code: "invalid", message: "days must be a positive integer" });
    }
    expect((await remote("/dashboard/data?days=9999", auth())).json().window.days).toBe(365);
  });

  test("the data is read-only: no other method is served", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      for (const path of ["/dashboard/data", "/account", "/dashboard"]) {
        const res = await local(path, {}, method);
        expect(res.status).toBe(404);
      }
    }
  });
});

describe("the page shell and its files are public and hold no data", () => {
  test("GET /dashboard from a remote peer without a token: HTML with the strict CSP, no figures", async () => {
    const res = await remote("/dashboard");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toContain("text/html");
    expect(res.headers["content-security-policy"]).toContain("default-src 'self'");
    expect(res.body).toContain('<script src="/dashboard/vendor/chart.js"');
    expect(res.body).not.toContain("Analytical");
    expect(res.body).not.toContain("atlas");
    expect(res.body).not.toMatch(/https?:\/\//);
  });

  test("the charting library is served from the allowlist, byte for byte the npm file", async () => {
    const res = await remote("/dashboard/vendor/chart.js");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toContain("text/javascript");
    expect(res.body).toBe(readFileSync(join(import.meta.dir, "../../node_modules/chart.js/dist/chart.umd.min.js"), "utf8"));
    for (const bad of ["chart.umd.min.js", "..%2F..%2Fpackage.json", "force-graph.min.js", "app.js"]) {
      expect((await remote(`/dashboard/vendor/${bad}`)).status).toBe(404);
    }
    for (const file of ["app.js", "style.css"]) expect((await remote(`/assets/dashboard/${file}`)).status).toBe(200);
    expect((await remote("/assets/dashboard/index.html")).status).toBe(404);
  });
});
