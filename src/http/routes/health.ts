import { Elysia } from "elysia";
import { health, probeLlm } from "../../core/health";
import type { Services } from "../../core/services";
import { LLM_PROBE_TIMEOUT_MS } from "../../llm/tuning";

export function healthRoutes(s: Services) {
  return (
    new Elysia({ name: "health" })
      .get("/health", () => health(s))
      // Not public like /health: it spends a model call, so it needs the token (or loopback).
      .get("/health/llm", () => probeLlm(s, s.llm, LLM_PROBE_TIMEOUT_MS))
  );
}
