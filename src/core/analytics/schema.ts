import { Type } from "@sinclair/typebox";

/** GET /index and memsvc_index: no input. */
export const IndexInput = Type.Object({}, { additionalProperties: false });
