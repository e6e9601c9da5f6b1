import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * A BERT-shaped model small enough to generate on every test run, so the suite
 * exercises the real transformers.js + onnxruntime path without any download.
 *
 * last_hidden_state[b, s] = table[input_ids[b, s]] + types[token_type_ids[b, s]]
 *                           + masked mean over s of table[input_ids[b, s]]
 *
 * The mean term is what makes the CLS-pooled vector carry the sentence: texts
 * sharing words end up close, unrelated texts far apart, and padding (masked
 * out) does not change a text's vector, as with a real encoder.
 */

/** What memsvc stores; a different width is only for testing the dimension check. */
const DEFAULT_HIDDEN = 384;
const SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] as const;

// Enough ordinary words that test sentences rarely hit [UNK]; the retrieval
// instruction's words are included so queries really differ from documents.
const WORDS = `
the a an and or but if then else of to in on at by for with from as is are was were be been being
it its this that these those there here he she they we you i me my your our their his her them us
not no yes do does did done have has had can could will would should may might must shall
what which who whom whose when where why how all any both each few more most other some such only
own same so than too very just also again once about above after before below between into through
during under over out up down off further while because until against
represent sentence searching relevant passages search find query document text word words
cat cats dog dogs kitten puppy pet pets animal animals bird fish horse cow sheep mouse
sat sits sleeps sleeping runs running ran jumps barked barks eats ate chased chases plays
mat rug sofa bed house home garden park tree grass floor room kitchen door window
database databases sql sqlite postgres table tables index query queries vector vectors embedding
memory memories server service agent agents model models code bug bugs test tests fix fixed build
file files folder disk cache network request response error errors log logs time date
stock stocks market markets price prices rose fell bank money trade trading economy interest rate
rain weather sun sunny cloudy snow cold hot warm wind storm today tomorrow yesterday
eat food bread apple banana coffee tea water milk dinner lunch breakfast cook cooking
one two three four five six seven eight nine ten first second last new old big small good bad
user users team project projects meeting deploy deployed release version config settings
python typescript javascript rust go java language compiler function functions class
write writes wrote read reads reading run make made use used using get got set put take took
like likes love loves want wants need needs know knows think thinks see saw look looks
man woman child children people person friend friends family city country world car road
`;
const PIECES = ["##s", "##es", "##ed", "##ing", "##ly", "##er", "##est", "##ion", "##al", "##y"];
const PUNCT = [".", ",", "!", "?", ":", ";", "'", '"', "-", "(", ")", "/"];
const LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789".split("");

function vocabulary(): string[] {
  const words = [...new Set(WORDS.split(/\s+/).filter(Boolean))];
  // Single letters and "##x" continuations make every lowercase ASCII word
  // tokenizable, as in a real WordPiece vocabulary.
  return [...SPECIAL, ...PUNCT, ...LETTERS, ...LETTERS.map((c) => `##${c}`), ...PIECES, ...words];
}

/** mulberry32: tiny seeded PRNG, so the weights are identical on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `bias` adds one shared direction to every word row: all texts then point
 * partly the same way, and unrelated texts score high cosines, as with bge
 * (~0.45 for unrelated texts). 0 gives near-orthogonal texts, like the
 * hashing fallback. The calibration tests use both spreads.
 */
function embeddingTable(vocab: string[], hidden: number, bias = 0): Float32Array {
  const rand = prng(0x5eed);
  const shared = Array.from({ length: hidden }, () => rand() * 2 - 1);
  const table = new Float32Array(vocab.length * hidden);
  for (let row = 0; row < vocab.length; row++) {
    // [PAD] contributes nothing; [CLS]/[SEP] are shared by every text, so keep
    // them small or they would make all sentences look alike.
    const scale = row === 0 ? 0 : row <= 4 ? 0.1 : 1;
    const lean = row <= 4 ? 0 : bias;
    for (let col = 0; col < hidden; col++) table[row * hidden + col] = (rand() * 2 - 1) * scale + lean * shared[col];
  }
  return table;
}

interface OnnxSchema {
  ModelProto: { encode(message: unknown): { finish(): Uint8Array } };
  TensorProto: { DataType: { FLOAT: number; INT64: number } };
  AttributeProto: { AttributeType: { INT: number; INTS: number } };
}

/** onnxruntime-web ships generated protobuf classes for ONNX; its package exports hide them, so load by path. */
function onnxSchema(): OnnxSchema {
  const webEntry = Bun.resolveSync("onnxruntime-web", import.meta.dir);
  let root = dirname(webEntry);
  while (!root.endsWith("onnxruntime-web")) root = dirname(root);
  const require = createRequire(import.meta.url);
  return require(join(root, "lib/onnxjs/ort-schema/protobuf/onnx.js")).onnx as OnnxSchema;
}

function modelBytes(vocabSize: number, hidden: number, table: Float32Array): Uint8Array {
  const onnx = onnxSchema();
  const { FLOAT, INT64 } = onnx.TensorProto.DataType;
  const { INT, INTS } = onnx.AttributeProto.AttributeType;
  const types = new Float32Array(2 * hidden);
  const rand = prng(0x7e57);
  for (let i = 0; i < types.length; i++) types[i] = (rand() * 2 - 1) * 0.05;

  const tensorInput = (name: string, elemType: number, dims: string[]) => ({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((dimParam) => ({ dimParam })) } } },
  });
  const floats = (name: string, dims: number[], data: Float32Array) => ({
    name,
    dims,
    dataType: FLOAT,
    rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  });
  const node = (opType: string, input: string[], output: string[], attribute: unknown[] = []) => ({
    opType,
    input,
    output,
    name: output[0],
    attribute,
  });
  const ints = (name: string, values: number[]) => ({ name, type: INTS, ints: values });
  const int = (name: string, value: number) => ({ name, type: INT, i: value });

  const graph = {
    name: "tiny-bge",
    initializer: [floats("word_embeddings", [vocabSize, hidden], table), floats("type_embeddings", [2, hidden], types)],
    input: [
      tensorInput("input_ids", INT64, ["batch", "sequence"]),
      tensorInput("attention_mask", INT64, ["batch", "sequence"]),
      tensorInput("token_type_ids", INT64, ["batch", "sequence"]),
    ],
    output: [tensorInput("last_hidden_state", FLOAT, ["batch", "sequence", String(hidden)])],
    node: [
      node("Gather", ["word_embeddings", "input_ids"], ["words"], [int("axis", 0)]),
      node("Gather", ["type_embeddings", "token_type_ids"], ["types"], [int("axis", 0)]),
      node("Cast", ["attention_mask"], ["mask"], [int("to", FLOAT)]),
      node("Unsqueeze", ["mask"], ["mask3"], [ints("axes", [2])]),
      node("Mul", ["words", "mask3"], ["masked"]),
      node("ReduceSum", ["masked"], ["sum"], [ints("axes", [1]), int("keepdims", 1)]),
      node("ReduceSum", ["mask3"], ["count"], [ints("axes", [1]), int("keepdims", 1)]),
      node("Div", ["sum", "count"], ["mean"]),
      node("Add", ["words", "types"], ["tokens"]),
      node("Add", ["tokens", "mean"], ["last_hidden_state"]),
    ],
  };
  // Opset 11 still takes Unsqueeze/ReduceSum axes as attributes, which keeps the graph short.
  return onnx.ModelProto.encode({
    irVersion: 7,
    producerName: "memsvc-test",
    opsetImport: [{ domain: "", version: 11 }],
    graph,
  }).finish();
}

function tokenizerJson(vocab: string[]) {
  const id = (token: string) => vocab.indexOf(token);
  const special = (content: string) => ({
    id: id(content),
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const seq = (name: "A" | "B", type_id: number) => ({ Sequence: { id: name, type_id } });
  const tok = (name: string, type_id: number) => ({ SpecialToken: { id: name, type_id } });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map(special),
    normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0)],
      pair: [tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0), seq("B", 1), tok("[SEP]", 1)],
      special_tokens: {
        "[CLS]": { id: "[CLS]", ids: [id("[CLS]")], tokens: ["[CLS]"] },
        "[SEP]": { id: "[SEP]", ids: [id("[SEP]")], tokens: ["[SEP]"] },
      },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((token, i) => [token, i])),
    },
  };
}

/**
 * Writes a complete model folder at `<dir>/<name>/` (config, tokenizer, ONNX
 * graph) and returns `dir`, the folder to use as the local model path.
 */
export async function makeTinyModel(dir: string, name = "test/tiny-bge", opts: { hidden?: number; bias?: number } = {}): Promise<string> {
  const hidden = opts.hidden ?? DEFAULT_HIDDEN;
  const vocab = vocabulary();
  const modelDir = join(dir, name);
  mkdirSync(join(modelDir, "onnx"), { recursive: true });
  const json = (file: string, value: unknown) => writeFileSync(join(modelDir, file), JSON.stringify(value, null, 2));
  json("config.json", {
    architectures: ["BertModel"],
    model_type: "bert",
    hidden_size: hidden,
    num_attention_heads: 12,
    num_hidden_layers: 1,
    intermediate_size: 1536,
    max_position_embeddings: 512,
    type_vocab_size: 2,
    vocab_size: vocab.length,
    pad_token_id: 0,
  });
  json("tokenizer_config.json", {
    tokenizer_class: "BertTokenizer",
    do_lower_case: true,
    model_max_length: 512,
    clean_up_tokenization_spaces: true,
    cls_token: "[CLS]",
    sep_token: "[SEP]",
    pad_token: "[PAD]",
    unk_token: "[UNK]",
    mask_token: "[MASK]",
    strip_accents: null,
    tokenize_chinese_chars: true,
  });
  json("tokenizer.json", tokenizerJson(vocab));
  await Bun.write(join(modelDir, "onnx", "model_quantized.onnx"), modelBytes(vocab.length, hidden, embeddingTable(vocab, hidden, opts.bias)));
  return dir;
}
