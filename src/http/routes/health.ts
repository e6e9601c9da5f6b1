import { Elysia } from "elysia";
import { health } from "../../core/health";
import type { Services } from "../../core/services";

export function healthRoutes(s: Services) {
  return new Elysia({ name: "health" }).get("/health", () => health(s));
}
