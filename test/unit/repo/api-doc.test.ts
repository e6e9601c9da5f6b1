import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { API_DOC, BEGIN, END, openApiDocument, renderReference, withReference } from "../../../scripts/api-doc";

test("docs/api.md's reference is what GET /openapi.json says (run bun scripts/api-doc.ts after changing a route)", async () => {
  const current = readFileSync(API_DOC, "utf8");
  expect(current).toContain(BEGIN);
  expect(current).toContain(END);
  expect(withReference(current, renderReference(await openApiDocument()))).toBe(current);
});

test("the generated region is replaced in place, the prose around it kept", () => {
  const doc = `# API\n\nprose\n\n${BEGIN}\nold\n${END}\n\nafter\n`;
  expect(withReference(doc, "new")).toBe(`# API\n\nprose\n\n${BEGIN}\n\nnew\n\n${END}\n\nafter\n`);
});
