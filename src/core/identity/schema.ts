import { Type } from "@sinclair/typebox";
import { text } from "../fields";

/** memsvc_identity. */
export const IdentityTool = Type.Object({ name: Type.Optional(text("One section's name (e.g. soul, memory); omit for all sections.")) }, { additionalProperties: false });
