import { dlopen, ptr } from "bun:ffi";
import embeddedLib from "../../node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1" with { type: "file" };
import { materialize } from "../native";

/** Held for the life of the process: closing the library would unmap code the binding still calls. */
const loadedLibraries: unknown[] = [];
let prepared = false;

/**
 * Call before `onnxruntime-node` (or transformers.js) is first imported.
 *
 * 1. onnxruntime 1.30 on Linux starts a telemetry client (a device id under
 *    ~/.cache/Microsoft, HTTPS uploads) unless ORT_DISABLE_TELEMETRY is set in
 *    the C environment. Assigning process.env in Bun does not reach getenv(),
 *    and transformers.js's own assignment comes too late anyway, so set it
 *    through libc. An explicit user setting is left alone.
 * 2. In a compiled binary Bun embeds and extracts `onnxruntime_binding.node`,
 *    but not the `libonnxruntime.so.1` it links against. Extracting the
 *    library and dlopen-ing it first lets the dynamic linker find it by soname
 *    when the binding loads. From source the library already sits next to the
 *    binding, so this step does nothing.
 */
export function prepareOnnxRuntime(): void {
  if (prepared) return;
  prepared = true;
  disableTelemetry();
  const libPath = materialize(embeddedLib, "libonnxruntime.so.1");
  if (libPath !== embeddedLib) loadedLibraries.push(dlopen(libPath, { OrtGetApiBase: { args: [], returns: "ptr" } }));
}

function disableTelemetry(): void {
  process.env.ORT_DISABLE_TELEMETRY ??= "1";
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
