import { Elysia } from "elysia";
import { distill } from "../../core/distill";
import { DistillInput } from "../../core/distill/schema";
import type { Services } from "../../core/services";
import { jsonObject } from "../body";

export function distillRoutes(s: Services) {
  return new Elysia({ name: "distill" }).post(
    "/distill",
    async ({ body, set }) => {
      const result = await distill(s, body, s.llm);
      set.status = "skipped" in result ? 200 : 201;
      return result;
    },
    jsonObject(DistillInput),
  );
}
