import { Elysia } from "elysia";
import { distill } from "../../core/distill";
import { DistillInput } from "../../core/distill/schema";
import type { Services } from "../../core/services";
import { creatorOf } from "../../core/tokens";
import { principalOf } from "../access";
import { jsonObject } from "../body";

export function distillRoutes(s: Services) {
  return new Elysia({ name: "distill" }).post(
    "/distill",
    async ({ body, set, request }) => {
      const result = await distill(s, body, s.llm, { createdBy: creatorOf(principalOf(request)) });
      set.status = "skipped" in result ? 200 : 201;
      return result;
    },
    jsonObject(DistillInput),
  );
}
