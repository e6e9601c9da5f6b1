import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { MODEL_FILES } from "./src/embed/load";

/**
 * Builds the single self-contained executable. What a plain `bun build
 * --compile` misses, and the plugins below fix:
 * - transformers.js imports `sharp` (image input) at top level; memsvc only
 *   embeds text, so a stub keeps ~20 MB of libvips out of the binary.
 * - transformers.js loads onnxruntime-node through createRequire(), which the
 *   bundler cannot follow; a static import makes Bun bundle it together with
 *   its native binding. Its libonnxruntime.so.1 is embedded by
 *   src/embed/ort-native.ts.
 * - a model folder can be compiled in (MEMSVC_EMBED_MODEL_DIR) so the binary
 *   works offline on first start; see src/embed/embedded-model.ts.
 */

export interface BuildOptions {
  entry: string;
  outfile: string;
  /** Folder holding the MODEL_FILES of `modelName`, compiled into the binary. */
  modelDir?: string;
  /** Model id the embedded folder is, e.g. "Xenova/bge-small-en-v1.5". */
  modelName?: string;
  /** Precompiled bytecode: faster start, bigger file. */
  bytecode?: boolean;
}

export interface BuildResult {
  outfile: string;
  bytes: number;
  seconds: number;
}

export const DEFAULT_MODEL_NAME = "Xenova/bge-small-en-v1.5";

export async function buildBinary(opts: BuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const outfile = resolve(opts.outfile);
  mkdirSync(dirname(outfile), { recursive: true });
  const plugins = [stubSharp, staticOnnxRuntimeImport];
  if (opts.modelDir) plugins.push(embedModel(resolve(opts.modelDir), opts.modelName ?? DEFAULT_MODEL_NAME));
  const result = await Bun.build({
    entrypoints: [opts.entry],
    target: "bun",
    format: "esm",
    minify: true,
    bytecode: opts.bytecode ?? true,
    sourcemap: "none",
    plugins,
    compile: {
      target: "bun-linux-x64",
      outfile,
      // A service must not change behaviour with whatever .env or bunfig.toml
      // happens to sit in the folder it is started from.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
  });
  if (!result.success) {
    throw new AggregateError(result.logs, `build of ${opts.entry} failed:\n${result.logs.map(String).join("\n")}`);
  }
  return { outfile, bytes: statSync(outfile).size, seconds: (performance.now() - started) / 1000 };
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

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

if (import.meta.main) {
  const modelDir = process.env.MEMSVC_EMBED_MODEL_DIR || undefined;
  const modelName = process.env.MEMSVC_EMBED_MODEL_NAME || DEFAULT_MODEL_NAME;
  try {
    const built = await buildBinary({
      entry: join(import.meta.dir, "src/main.ts"),
      outfile: join(import.meta.dir, "dist/memsvc"),
      modelDir,
      modelName,
    });
    const model = modelDir ? ` with model ${modelName} from ${modelDir}` : "";
    console.log(`built ${built.outfile}${model}: ${megabytes(built.bytes)} in ${built.seconds.toFixed(1)} s`);
  } catch (error) {
    console.error(`build failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
