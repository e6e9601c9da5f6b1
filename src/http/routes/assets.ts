import { Elysia } from "elysia";
import { notFound } from "../../errors";
import type { Services } from "../../core/services";
import { FAVICON, fileResponse, SHARED_ASSETS, SHARED_VENDOR } from "../pages";

const pick = (map: Readonly<Record<string, string>>, name: string, where: string) => {
  if (!Object.hasOwn(map, name)) throw notFound(`no asset ${where}${name.slice(0, 80)}`);
  return fileResponse(map[name], name);
};

export function assetRoutes(_s: Services) {
  return new Elysia({ name: "assets" })
    .get("/assets/:name", ({ params }) => pick(SHARED_ASSETS, params.name, ""))
    .get("/assets/vendor/:name", ({ params }) => pick(SHARED_VENDOR, params.name, "vendor/"))
    .get("/favicon.svg", () => fileResponse(FAVICON, "favicon.svg"))
    .get("/favicon.ico", () => fileResponse(FAVICON, "favicon.svg"));
}
