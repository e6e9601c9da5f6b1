import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mergeSums, parseSums, sha256File } from "../../../sha256sums";

// dist/SHA256SUMS as build:all and build leave it, on real files in a temp folder.

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "memsvc-sums-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function hash(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}

test("build:all then build: the host's line is replaced, the other platforms' lines kept, a line of a vanished file dropped", async () => {
  const dir = folder({ "memsvc-linux-x64": "all", "memsvc-darwin-arm64": "mac", "memsvc-windows-x64.exe": "win" });
  await mergeSums(dir, ["memsvc-linux-x64", "memsvc-darwin-arm64", "memsvc-windows-x64.exe"]);
  expect(readFileSync(join(dir, "SHA256SUMS"), "utf8")).toBe(
    `${hash("mac")}  memsvc-darwin-arm64\n${hash("all")}  memsvc-linux-x64\n${hash("win")}  memsvc-windows-x64.exe\n`,
  );
  // `npm run build` rebuilds this machine's binary; someone deleted the Windows one meanwhile.
  writeFileSync(join(dir, "memsvc-linux-x64"), "host");
  rmSync(join(dir, "memsvc-windows-x64.exe"));
  const sums = await mergeSums(dir, ["memsvc-linux-x64"]);
  expect([...sums]).toEqual([
    ["memsvc-darwin-arm64", hash("mac")],
    ["memsvc-linux-x64", hash("host")],
  ]);
  expect(readFileSync(join(dir, "SHA256SUMS"), "utf8")).toBe(`${hash("mac")}  memsvc-darwin-arm64\n${hash("host")}  memsvc-linux-x64\n`);
  // Written through a temp file that is gone afterwards.
  expect(readdirSync(dir).sort()).toEqual(["SHA256SUMS", "memsvc-darwin-arm64", "memsvc-linux-x64"]);
  // What sha256sum -c reads: the same hashes as sha256File.
  expect(await sha256File(join(dir, "memsvc-linux-x64"))).toBe(hash("host"));
  rmSync(dir, { recursive: true });
});

test("a hand-edited SHA256SUMS: junk lines, binary-mode stars, CRLF and upper-case hex are read; paths outside the folder are not kept", async () => {
  const upper = hash("mac").toUpperCase();
  const text = `# comment\r\n${upper} *memsvc-darwin-arm64\r\nnot a line\n${hash("x")}  ../etc/passwd\n\n`;
  expect([...parseSums(text)]).toEqual([
    ["memsvc-darwin-arm64", hash("mac")],
    ["../etc/passwd", hash("x")],
  ]);
  const dir = folder({ "memsvc-darwin-arm64": "mac", "memsvc-linux-x64": "host", SHA256SUMS: text });
  await mergeSums(dir, ["memsvc-linux-x64"]);
  expect(readFileSync(join(dir, "SHA256SUMS"), "utf8")).toBe(`${hash("mac")}  memsvc-darwin-arm64\n${hash("host")}  memsvc-linux-x64\n`);
  rmSync(dir, { recursive: true });
});

test("a stale line is kept as it was: its hash still describes the file it names until that file is rebuilt", async () => {
  const dir = folder({ "memsvc-linux-arm64": "new bytes", "memsvc-linux-x64": "host", SHA256SUMS: `${hash("old bytes")}  memsvc-linux-arm64\n` });
  const sums = await mergeSums(dir, ["memsvc-linux-x64"]);
  // install.sh then refuses the mismatching file rather than trusting a hash nobody computed.
  expect(sums.get("memsvc-linux-arm64")).toBe(hash("old bytes"));
  rmSync(dir, { recursive: true });
});
