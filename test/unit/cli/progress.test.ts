import { expect, test } from "bun:test";
import { progressLine } from "../../../src/cli/progress";

const fakeStream = (isTTY: boolean) => {
  const out: string[] = [];
  return { out, stream: { isTTY, write: (s: string) => (out.push(s), true) } as unknown as NodeJS.WriteStream };
};

test("on a terminal the progress line is redrawn in place, and the summary replaces it", () => {
  const { out, stream } = fakeStream(true);
  const p = progressLine(stream, 10);
  p.update(0, 200, "memories: 0/200");
  p.update(100, 200, "memories: 100/200"); // within 100 ms of the last draw: skipped
  p.update(200, 200, "memories: 200/200"); // the end is always drawn
  p.done("migrated 200 memories");
  expect(out).toEqual(["\r\x1b[2K[----------]   0% memories: 0/200", "\r\x1b[2K[##########] 100% memories: 200/200", "\r\x1b[2K" + "migrated 200 memories\n"]);
});

test("elsewhere (a log, CI) it writes one plain line per 10% step and no control codes", () => {
  const { out, stream } = fakeStream(false);
  const p = progressLine(stream);
  for (let i = 0; i <= 1000; i += 25) p.update(i, 1000, `memories: ${i}/1000`);
  p.done("migrated 1000 memories");
  expect(out.length).toBe(12);
  expect(out[0]).toBe("0% memories: 0/1000\n");
  expect(out[3]).toBe("30% memories: 300/1000\n");
  expect(out[10]).toBe("100% memories: 1000/1000\n");
  expect(out.join("")).not.toMatch(/[\r\x1b]/);
});
