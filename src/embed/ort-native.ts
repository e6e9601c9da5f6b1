import { dlopen, ptr } from "bun:ffi";

let prepared = false;

/**
 * Call before `onnxruntime-node` (or transformers.js) is first imported.
 *
 * onnxruntime 1.30 on Linux starts a telemetry client (a device id under
 * ~/.cache/Microsoft, HTTPS uploads) unless ORT_DISABLE_TELEMETRY is set in
 * the C environment. Assigning process.env in Bun does not reach getenv(),
 * and transformers.js's own assignment comes too late anyway, so set it
 * through libc. An explicit user setting is left alone.
 *
 * Where the native runtime itself comes from (node_modules, or the copy a
 * compiled binary carries) is src/platform/natives.ts's business.
 */
export function prepareOnnxRuntime(): void {
  if (prepared) return;
  prepared = true;
  disableTelemetry();
}

function disableTelemetry(): void {
  process.env.ORT_DISABLE_TELEMETRY ??= "1";
  if (process.platform !== "linux") return;
  try {
    const libc = dlopen("libc.so.6", { setenv: { args: ["ptr", "ptr", "i32"], returns: "i32" } });
    // Named so the buffers stay alive until setenv has copied them.
    const name = Buffer.from("ORT_DISABLE_TELEMETRY\0");
    const value = Buffer.from("1\0");
    libc.symbols.setenv(ptr(name), ptr(value), 0);
    libc.close();
  } catch {
    // Not glibc (no libc.so.6): the binary targets glibc, so only an unusual
    // source checkout lands here, and it merely keeps onnxruntime's default.
  }
}
