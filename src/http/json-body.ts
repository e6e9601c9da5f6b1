import { invalid } from "../errors";
import { readBodyLimited } from "./limits";

const utf8 = new TextDecoder("utf-8", { fatal: true });
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/**
 * The body parser of every route that takes a body (app.ts registers it
 * ahead of them; the MCP transports read their own). Bodies are UTF-8 JSON:
 * the default decoding would turn invalid bytes into U+FFFD and store the
 * damage silently, and form encodings would let a plain cross-site HTML form
 * post fields here. Both are refused with a 400 before any handler runs.
 */
export async function parseJsonBody({ request, contentType }: { request: Request; contentType: string }): Promise<unknown> {
  const bytes = await readBodyLimited(request);
  if (bytes.byteLength === 0) return "";
  if (!JSON_TYPE.test(contentType.trim())) {
    const given = request.headers.get("content-type");
    throw invalid(`request bodies are JSON: send Content-Type: application/json (got ${given ? given.slice(0, 80) : "no Content-Type"})`);
  }
  const text = decodeUtf8(bytes);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalid(`malformed JSON body: ${(e as Error).message.replace(/^JSON Parse error: /, "")}`);
  }
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw invalid("the body is not valid UTF-8 (JSON bodies must be UTF-8)");
  }
}

/** The body as text, refused (400) unless it is valid UTF-8: for routes that read their own bodies. */
export async function utf8Text(request: Request): Promise<string> {
  return decodeUtf8(await readBodyLimited(request));
}
