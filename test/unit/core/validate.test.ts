import { expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { checkInput, unknownKeysProblem } from "../../../src/core/validate";
import { nullable, text } from "../../../src/core/fields";
import { MarkStaleInput, RestoreInput } from "../../../src/core/memories/schema";
import { DistillInput } from "../../../src/core/distill/schema";

const message = (schema: Parameters<typeof checkInput>[0], value: unknown) => {
  try {
    checkInput(schema, value);
    return "accepted";
  } catch (e) {
    return (e as Error).message;
  }
};

test("paths read as a person writes them, with {field} in a schema's message", () => {
  expect(
    message(MarkStaleInput, {
      repo: "r",
      marks: [
        { id: "a", reason: "changed" },
        { id: "b", reason: "changed", commits: -2 },
      ],
    }),
  ).toBe("marks[1].commits must be a whole number >= 0");
  expect(message(MarkStaleInput, { repo: "r", marks: ["x"] })).toBe("marks[0] must be an object");
  expect(message(MarkStaleInput, { repo: "r", marks: [{ id: "a" }] })).toBe("marks[0].reason must be one of changed, missing, commit-unknown, repo-deleted");
  expect(message(DistillInput, { messages: [{ content: "x" }] })).toBe("messages[0].role must be a string");
});

test("a nullable field's own rule names the problem inside it; null stays absent", () => {
  expect(message(MarkStaleInput, { repo: "r", fresh: ["a", 5] })).toBe("fresh[1] must be a string");
  expect(message(MarkStaleInput, { repo: "r", fresh: "a" })).toBe("fresh must be an array of memory ids");
  expect(message(MarkStaleInput, { repo: "r", fresh: null, marks: null, head: null })).toBe("accepted");
  expect(message(Type.Object({ n: nullable(text("x")) }), { n: 3 })).toBe("n must be a string");
});

test("`missing` names an absent field; `unknownKeys` names every unknown key, at any depth", () => {
  expect(message(RestoreInput, { id: "abcd1234" })).toBe("version is required (see GET /memory/history)");
  expect(message(RestoreInput, { id: "abcd1234", version: 1, content: "x", b: 1 })).toBe('unknown fields content, b: the body is {"id", "version"}');
  const inner = Type.Object({
    a: Type.Optional(Type.Object({ x: Type.String() }, { additionalProperties: false, unknownKeys: (k: string[]) => `a: no ${k.join()}` })),
  });
  expect(unknownKeysProblem(inner, { a: { x: "1", y: 2 } })).toBe("a: no y");
  expect(unknownKeysProblem(inner, { a: { x: "1" } })).toBeNull();
  // Without the rule, unknown keys are TypeBox's business (MCP refuses them; REST drops them).
  expect(unknownKeysProblem(Type.Object({ a: Type.String() }, { additionalProperties: false }), { a: "1", b: 2 })).toBeNull();
});
