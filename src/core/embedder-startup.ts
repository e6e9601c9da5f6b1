import { ensureCalibration } from "./search";
import { FallbackEmbedder, loadEmbedder, modelSource, type EmbedderOptions, type Embedder } from "../embed";
import { runReembed } from "./memories";
import type { Services } from "./services";

/**
 * The embedder a server starts serving with, never waiting on the network:
 * a model in the binary or on disk is loaded now (a local read, and it keeps
 * the stored vector space across restarts); a model that would have to be
 * downloaded is fetched later by `downloadModel`, and the offline fallback
 * serves until then. A hub that accepts connections but never answers used to
 * hold start-up for its 30 s timeout on every start.
 */
export async function startupEmbedder(opts: EmbedderOptions): Promise<{ embedder: Embedder; needsDownload: boolean }> {
  if (modelSource(opts) !== "download") return { embedder: await loadEmbedder(opts), needsDownload: false };
  opts.log(`embedder: serving with the offline fallback while ${opts.model} downloads in the background`);
  return { embedder: new FallbackEmbedder(), needsDownload: true };
}

/** Runs re-embedding passes one after another, so two passes never interleave. */
export class ReembedQueue {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly s: Services,
    private readonly signal: AbortSignal,
  ) {}

  schedule(): Promise<unknown> {
    this.chain = this.chain
      // A large store's index loads after the server listens; measured before it is full, calibration saw no vectors and was skipped.
      .then(() => this.s.indexState.ready)
      .then(() => (this.signal.aborted ? undefined : runReembed(this.s, this.signal)))
      // Calibration waits for re-embedding: it measures the active embedder's vectors only.
      .then(() => (this.signal.aborted ? undefined : ensureCalibration(this.s, false, this.signal)))
      .catch((e) => this.s.log("error", `re-embedding or calibration stopped: ${(e as Error).message}; it resumes at next start`));
    return this.chain;
  }
}

/**
 * Downloads and loads the model while the server serves with the fallback;
 * when it is ready it becomes the active embedder and stored memories are
 * re-embedded into its space in the background. A failed download leaves the
 * fallback in place (the next start tries again) and says why in /health.
 */
export async function downloadModel(s: Services, opts: EmbedderOptions, queue: ReembedQueue, signal: AbortSignal): Promise<void> {
  s.embedderLoad = { model: opts.model, state: "downloading", since: new Date(s.now()).toISOString() };
  let failure = "";
  const next = await loadEmbedder({
    ...opts,
    log: (line) => {
      if (/could not/.test(line)) failure = line.replace(/^embedder: /, "");
      opts.log(line);
    },
  });
  if (signal.aborted) {
    await next.close?.();
    return;
  }
  if (next.kind !== "onnx") {
    s.embedderLoad = { model: opts.model, state: "failed", since: s.embedderLoad.since, error: failure || `${opts.model} could not be loaded` };
    return;
  }
  await s.useEmbedder(next);
  s.embedderLoad = null;
  s.log("info", `embedder: switched to ${next.id}; re-embedding stored memories in the background`);
  void queue.schedule();
}
