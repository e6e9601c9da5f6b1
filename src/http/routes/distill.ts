import { Elysia } from "elysia";
import { distill } from "../../core/distill";
import type { Services } from "../../core/services";
import { createLlmClient } from "../../llm/client";
import { DistillInput } from "../../core/distill/schema";
import { jsonObject } from "../body";

export function distillRoutes(s: Services) {
  // One client per server: it keeps its connection pool between requests.
  const llm = createLlmClient(s.config.llm, s.config.paths.state);
  return new Elysia({ name: "distill" }).post(
    "/distill",
    async ({ body, set }) => {
      const result = await distill(s, body, llm);
      set.status = "skipped" in result ? 200 : 201;
      return result;
    },
    jsonObject(DistillInput),
  );
}
