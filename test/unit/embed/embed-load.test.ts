import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DIMENSIONS, loadEmbedder, modelSource, type Embedder } from "../../../src/embed";
import { makeTinyModel } from "../../helpers/tiny-model";

const MODEL = "test/tiny-bge";
let root: string;
/** A pristine copy of the tiny model; each test copies what it needs into its own home. */
let source: string;
/** Stands in for the model hub; counts requests so "offline" can be checked. */
let hub: ReturnType<typeof Bun.serve>;
let hubRequests: string[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "memsvc-embed-load-"));
  source = await makeTinyModel(join(root, "hub"), MODEL);
  hub = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const path = new URL(req.url).pathname;
      hubRequests.push(path);
      // The hub's layout: /<owner>/<name>/resolve/<revision>/<file>
      const match = path.match(/^\/(.+?)\/resolve\/main\/(.+)$/);
      const file = match ? Bun.file(join(source, match[1]!, match[2]!)) : null;
      return file ? file.exists().then((ok) => (ok ? new Response(file) : new Response("not found", { status: 404 }))) : new Response("bad", { status: 400 });
    },
  });
});

afterAll(() => {
  hub?.stop(true);
  rmSync(root, { recursive: true, force: true });
});

function newHome(): string {
  hubRequests = [];
  return mkdtempSync(join(root, "home-"));
}

async function load(home: string, model: string, offline: boolean, hubUrl = hub.url.href) {
  const lines: string[] = [];
  const embedder = await loadEmbedder({ home, model, offline, log: (line) => lines.push(line), hubUrl });
  return { embedder, lines };
}

async function close(embedder: Embedder) {
  await embedder.close?.();
}

describe("loadEmbedder resolution order", () => {
  test("a model in <home>/models/<name> is used, without contacting the hub", async () => {
    const home = newHome();
    await makeTinyModel(join(home, "models"), MODEL);
    expect(modelSource({ home, model: MODEL, offline: false })).toBe("disk");
    const { embedder, lines } = await load(home, MODEL, false);
    expect(embedder.kind).toBe("onnx");
    expect(embedder.id).toBe(`onnx:${MODEL}:q8`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`onnx:${MODEL}:q8`);
    expect(lines[0]).toContain(join(home, "models", MODEL));
    expect(hubRequests).toEqual([]);
    await close(embedder);
  });

  test("no model and offline: the fallback, one line saying how to get the model, no request", async () => {
    const home = newHome();
    const model = "Xenova/bge-small-en-v1.5";
    expect(modelSource({ home, model, offline: true })).toBe("fallback");
    const { embedder, lines } = await load(home, model, true);
    expect(embedder.kind).toBe("fallback");
    expect(embedder.id).toBe("fallback:hash-v1");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("fallback:hash-v1");
    expect(lines[0]).toContain(join(home, "models", model));
    expect(lines[0]).toContain("onnx/model_quantized.onnx");
    expect(lines[0]).toContain("without offline mode");
    expect(hubRequests).toEqual([]);
    const [v] = await embedder.embed(["still works"], "document");
    expect(v!.length).toBe(DIMENSIONS);
  });

  test("a corrupt model file: the error is logged and the fallback is used", async () => {
    const home = newHome();
    await makeTinyModel(join(home, "models"), MODEL);
    writeFileSync(join(home, "models", MODEL, "onnx", "model_quantized.onnx"), "this is not a protobuf");
    const { embedder, lines } = await load(home, MODEL, true);
    expect(embedder.kind).toBe("fallback");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`could not load model ${MODEL}`);
    expect(lines[1]).toContain("fallback:hash-v1");
    expect(lines[1]).toContain("replace the model files");
  });

  test("a missing tokenizer offline: the fallback names the missing file", async () => {
    const home = newHome();
    await makeTinyModel(join(home, "models"), MODEL);
    unlinkSync(join(home, "models", MODEL, "tokenizer.json"));
    const { embedder, lines } = await load(home, MODEL, true);
    expect(embedder.kind).toBe("fallback");
    expect(lines.at(-1)).toContain("put tokenizer.json into");
    expect(hubRequests).toEqual([]);
  });

  test("online with no model: downloaded from the hub into <home>/models, then found on disk", async () => {
    const home = newHome();
    expect(modelSource({ home, model: MODEL, offline: false })).toBe("download");
    const { embedder, lines } = await load(home, MODEL, false);
    expect(embedder.kind).toBe("onnx");
    expect(lines[0]).toContain("downloaded");
    expect(hubRequests.some((path) => path.endsWith("/onnx/model_quantized.onnx"))).toBe(true);
    const onDisk = join(home, "models", MODEL, "onnx", "model_quantized.onnx");
    expect(readFileSync(onDisk)).toEqual(readFileSync(join(source, MODEL, "onnx", "model_quantized.onnx")));
    const [downloaded] = await embedder.embed(["the cat sat"], "document");
    await close(embedder);

    hubRequests = [];
    expect(modelSource({ home, model: MODEL, offline: true })).toBe("disk");
    const again = await load(home, MODEL, true);
    expect(again.embedder.kind).toBe("onnx");
    const [fromDisk] = await again.embedder.embed(["the cat sat"], "document");
    expect(Array.from(fromDisk!)).toEqual(Array.from(downloaded!));
    expect(hubRequests).toEqual([]);
    await close(again.embedder);
  });

  test("online but the hub does not have the model: logged, fallback, nothing half-written", async () => {
    const home = newHome();
    const { embedder, lines } = await load(home, "nobody/no-such-model", false);
    expect(embedder.kind).toBe("fallback");
    expect(lines[0]).toContain("could not download model nobody/no-such-model");
    expect(hubRequests.length).toBeGreaterThan(0);
    const dir = join(home, "models", "nobody", "no-such-model");
    expect(existsSync(join(dir, "onnx", "model_quantized.onnx"))).toBe(false);
  });

  test("online but the hub is unreachable: logged, fallback", async () => {
    const home = newHome();
    // A port that was just free: connection refused, no waiting.
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const url = closed.url.href;
    closed.stop(true);
    mkdirSync(join(home, "models"), { recursive: true });
    const { embedder, lines } = await load(home, MODEL, false, url);
    expect(embedder.kind).toBe("fallback");
    expect(lines[0]).toContain(`could not download model ${MODEL}`);
  });
});
