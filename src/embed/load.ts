import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ProgressInfo } from "@huggingface/transformers";
import { embeddedModel, type EmbeddedModel } from "./embedded-model";
import { FallbackEmbedder } from "./fallback";
import { OnnxEmbedder } from "./onnx";
import type { Embedder } from "./types";
import { ensurePrivateDir } from "../private-files";

/** What transformers.js reads for a q8 feature-extraction pipeline. */
export const MODEL_FILES = ["config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model_quantized.onnx"] as const;

export interface EmbedderOptions {
  /** Service home; models live in `<home>/models/<model>/`. */
  home: string;
  /** Model id, e.g. "Xenova/bge-small-en-v1.5". */
  model: string;
  /** Never contact the model hub. */
  offline: boolean;
  log: (line: string) => void;
  /** Model hub base URL; a mirror, or a local server in tests. */
  hubUrl?: string;
}

/** Where loadEmbedder will take the model from, in the order it tries. */
export type ModelSource = "embedded" | "disk" | "download" | "fallback";

/** Cheap (no model loading): lets `status` and startup say whether a first-use download is ahead. */
export function modelSource(opts: Pick<EmbedderOptions, "home" | "model" | "offline">): ModelSource {
  if (embeddedModel?.name === opts.model) return "embedded";
  if (missingFiles(modelDir(opts)).length === 0) return "disk";
  return opts.offline ? "fallback" : "download";
}

/**
 * The best embedder available: the model compiled into the binary, then
 * `<home>/models/<model>/`, then a download from the hub (unless offline),
 * then the hashing fallback. Never throws: a missing or broken model costs
 * search quality, not the service, and the log says which one is active.
 */
export async function loadEmbedder(opts: EmbedderOptions): Promise<Embedder> {
  const source = modelSource(opts);
  const dir = modelDir(opts);
  if (source !== "fallback") {
    try {
      ensurePrivateDir(join(opts.home, "models"));
      if (source === "embedded") extractEmbedded(embeddedModel as EmbeddedModel, dir);
      const embedder = await OnnxEmbedder.load({
        model: opts.model,
        modelsDir: join(opts.home, "models"),
        allowDownload: source === "download",
        hubUrl: opts.hubUrl,
        onProgress: source === "download" ? downloadProgress(opts.model) : undefined,
      });
      const origin = { embedded: "built into this binary, extracted to", download: "downloaded to", disk: "from" }[source];
      opts.log(`embedder: ${embedder.id} (${origin} ${dir})`);
      return embedder;
    } catch (error) {
      const verb = source === "download" ? "download" : "load";
      opts.log(`embedder: could not ${verb} model ${opts.model} (${dir}): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const fallback = new FallbackEmbedder();
  const missing = missingFiles(dir);
  const howTo =
    missing.length === 0
      ? `replace the model files in ${dir}${opts.offline ? "" : " (or delete them to download a fresh copy)"}`
      : `put ${missing.join(", ")} into ${dir}${opts.offline ? " or run once without offline mode to download them" : ""}`;
  opts.log(`embedder: ${fallback.id}, an offline hashing fallback with keyword-level similarity only; for semantic search ${howTo}`);
  return fallback;
}

function modelDir(opts: Pick<EmbedderOptions, "home" | "model">): string {
  return join(opts.home, "models", opts.model);
}

function missingFiles(dir: string): string[] {
  return MODEL_FILES.filter((file) => !existsSync(join(dir, file)));
}

/**
 * onnxruntime cannot read /$bunfs, so the embedded files are written out once
 * into the ordinary model folder (temp name + rename: a concurrent start never
 * sees half a file). A file of the same size is taken to be the same file.
 */
function extractEmbedded(model: EmbeddedModel, dir: string): void {
  for (const [file, embeddedPath] of Object.entries(model.files)) {
    const target = join(dir, file);
    if (existsSync(target) && statSync(target).size === Bun.file(embeddedPath).size) continue;
    mkdirSync(dirname(target), { recursive: true });
    const temp = `${target}.${process.pid}.tmp`;
    // copyFileSync fails with ENOENT on /$bunfs paths (Bun 1.4.5); reading them works.
    writeFileSync(temp, readFileSync(embeddedPath));
    renameSync(temp, target);
  }
}

/** One self-rewriting line on a terminal; a start and an end line otherwise (logs stay readable). */
function downloadProgress(model: string): (info: ProgressInfo) => void {
  const tty = process.stderr.isTTY === true;
  let state: "waiting" | "running" | "finished" = "waiting";
  let lastPercent = -1;
  return (info) => {
    if (info.status !== "progress_total" || state === "finished") return;
    if (state === "waiting" && !tty) process.stderr.write(`downloading ${model} (${megabytes(info.total)} MB)...\n`);
    state = "running";
    const percent = Math.min(100, Math.floor(info.progress));
    if (tty && percent !== lastPercent) {
      const filled = Math.round(percent / 5);
      process.stderr.write(`\rdownloading ${model} [${"#".repeat(filled)}${".".repeat(20 - filled)}] ${percent}% of ${megabytes(info.total)} MB`);
    }
    lastPercent = percent;
    if (percent >= 100) {
      state = "finished";
      process.stderr.write(tty ? "\n" : `downloaded ${model}\n`);
    }
  };
}

function megabytes(bytes: number): string {
  return (bytes / 1_000_000).toFixed(1);
}
