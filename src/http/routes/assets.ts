import { Elysia } from "elysia";
import { notFound } from "../../errors";
import type { Services } from "../../core/services";
import { fileResponse, SHARED_ASSETS } from "../pages";

export function assetRoutes(_s: Services) {
  return new Elysia({ name: "assets" }).get("/assets/:name", ({ params }) => {
    const path = Object.hasOwn(SHARED_ASSETS, params.name) ? SHARED_ASSETS[params.name] : undefined;
    if (!path) throw notFound(`no asset ${params.name}`);
    return fileResponse(path, params.name);
  });
}
