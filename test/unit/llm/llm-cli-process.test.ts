import { expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { runCli } from "../../../src/llm/cli-process";

const opts = { stdin: "", cwd: tmpdir(), env: process.env, timeoutMs: 5_000, maxStdoutBytes: 1_000, maxStderrBytes: 200 };

test("a program that does not exist is reported, not thrown, and not waited for", async () => {
  const r = await runCli("/nonexistent/claude", ["-p"], opts);
  expect(r.spawnError?.code).toBe("ENOENT");
  expect(r.timedOut).toBe(false);
});

test("stdout past its bound stops the run (overflow); stderr keeps its tail", async () => {
  const r = await runCli("/bin/sh", ["-c", "i=0; while [ $i -lt 100 ]; do echo line-$i >&2; i=$((i+1)); done; yes | head -c 100000"], opts);
  expect(r.overflow).toBe(true);
  expect(r.stderr.length).toBeLessThanOrEqual(200);
  expect(r.stderr.trim().endsWith("line-99")).toBe(true);
});

test("the prompt arrives on stdin whole, past a pipe buffer and in UTF-8", async () => {
  const prompt = `${"Grüße, 東京 ".repeat(30_000)}\nEND`;
  const r = await runCli("/bin/cat", [], { ...opts, stdin: prompt, maxStdoutBytes: 4 * 1024 * 1024 });
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(prompt);
});
