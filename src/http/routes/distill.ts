import { Elysia } from "elysia";
import { distill } from "../../core/distill";
import type { Services } from "../../core/services";
import { objectBody } from "../body";

export function distillRoutes(s: Services) {
  return new Elysia({ name: "distill" }).post("/distill", async ({ body, set }) => {
    const result = await distill(s, objectBody(body), s.llm);
    set.status = "skipped" in result ? 200 : 201;
    return result;
  });
}
