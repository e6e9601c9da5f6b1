import { tooLarge } from "../errors";

/** Largest request body accepted (the spec's /distill limit applies everywhere). */
export const MAX_BODY_BYTES = 25 * 1024 * 1024;

/**
 * Bun.serve's maxRequestBodySize for memsvc's listeners: no cap of Bun's own.
 * Bun refuses a body over its cap with a bare 413 and no body, before the
 * app can answer; MAX_BODY_BYTES is enforced by the app instead (a declared
 * Content-Length in app.ts before any byte is read, a chunked body while it
 * streams in readBodyLimited), so every 413 carries the one error shape.
 */
export const LISTEN_MAX_REQUEST_BODY_SIZE = Number.MAX_SAFE_INTEGER;

const LABEL = `${MAX_BODY_BYTES / (1024 * 1024)} MB`;

export function bodyTooLargeMessage(declared?: number): string {
  return declared === undefined
    ? `request body exceeds the limit of ${MAX_BODY_BYTES} bytes (${LABEL}); reading stopped there`
    : `request body is ${declared} bytes; the limit is ${MAX_BODY_BYTES} (${LABEL})`;
}

/**
 * The body's bytes, refused with 413 as soon as more than MAX_BODY_BYTES
 * have arrived. Content-Length is checked before any route runs (app.ts);
 * a chunked body has none, so the count happens here while streaming and the
 * rest is never read: arrayBuffer() would buffer all of it first.
 */
export async function readBodyLimited(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(bodyTooLargeMessage());
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
