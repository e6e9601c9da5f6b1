import { inlineMarkdown } from "../identity";
import { RECEIPT_GIST_CHARS } from "./tuning";

/** A memory's first meaningful line as one line of Markdown, as the recall block lists it. */
export function gistOf(content: string): string {
  return inlineMarkdown(content, RECEIPT_GIST_CHARS);
}
