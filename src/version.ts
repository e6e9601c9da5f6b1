import pkg from "../package.json" with { type: "json" };

/** The release reported by /health and --version; package.json is the single truth. */
export const VERSION: string = pkg.version;
