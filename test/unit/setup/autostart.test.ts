import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { autostartCheck, planService } from "../../../src/setup/service";

// PATH is empty: no service manager is found, as in a container without one.
test("autostartCheck warns when nothing is installed, and when the file is there but no manager runs it", async () => {
  const user = mkdtempSync(join(tmpdir(), "autostart-"));
  const opts = { command: ["/usr/bin/memsvc"], home: join(user, ".memsvc"), env: { HOME: user, PATH: "" }, platform: "linux" as const };
  const none = await autostartCheck(opts);
  expect(none.outcome).toBe("warn");
  expect(none.advice).toBe("run `memsvc service install`");
  const plan = planService(opts);
  expect(plan.available).toBe(false);
  mkdirSync(join(user, ".config", "systemd", "user"), { recursive: true });
  writeFileSync(plan.file, plan.content);
  const unmanaged = await autostartCheck(opts);
  expect(unmanaged.outcome).toBe("warn");
  expect(unmanaged.detail).toContain(plan.file);
  expect(unmanaged.detail).toContain("systemd is not usable here");
});
