import type { SecretLintRuleContext, SecretLintRuleCreator, SecretLintSourceCode } from "@secretlint/types";
import { StructuredSource } from "structured-source";

/** One finding: the rule, its message id and the UTF-16 range of the secret. */
export interface Finding {
  ruleId: string;
  messageId: string | undefined;
  range: readonly [number, number];
}

/**
 * Runs secretlint rules on one text through their documented creator API
 * (`create(context, options)` -> `{ file(source) }`), without secretlint's
 * engine. Why our own host: `lintSource` builds its engine for every text (a
 * rule wrapper, a context and two event emitters per rule, a line index of the
 * text, a promise chain per rule, then a message clean-up); for the short
 * texts of an ingest that setup cost more than the rules. The preset on the
 * HTTP bench's notes, one process alternating (bench/redaction.ts has the
 * whole redaction): 0.109-0.142 ms CPU a text through the engine, 0.051-0.061
 * here. The rules, and so the detection, are secretlint's own, unchanged.
 *
 * What the engine adds that this host leaves out, and why nothing is lost:
 * "ignore" reports (only the comment filter makes them, and redact.ts leaves
 * that rule out on purpose), allowMessageIds (we pass no options), localised
 * message text (we keep the message id and the range), line/column locations
 * (computed here only if a rule asks), duplicate and order clean-up (the
 * caller sorts and merges ranges: redact.ts replaceRanges). Unlike the
 * engine, a leading byte-order mark is not cut off before the rules run, so
 * ranges always index the text given (the engine's were one short after one).
 */
export async function findSecrets(rules: readonly SecretLintRuleCreator[], content: string, file: { filePath: string; ext: string }): Promise<Finding[]> {
  const found: Finding[] = [];
  const source = sourceOf(content, file);
  // Every rule's outcome, awaited together: one rule's error fails the whole
  // scan (redaction fails closed) and never leaves another's rejection unhandled.
  const pending: unknown[] = [];
  for (const rule of rules) {
    if (!rule.meta.supportedContentTypes.some((t) => t === "text" || t === "all")) continue;
    const context: SecretLintRuleContext = {
      sharedOptions: {},
      // Only the id is kept: the formatted message would quote the secret, and nobody reads it.
      createTranslator: () => ((messageId: string, data?: unknown) => ({ message: "", messageId, data })) as never,
      report: (d) => found.push({ ruleId: rule.meta.id, messageId: d.message.messageId, range: d.range }),
      ignore: () => {},
    };
    try {
      pending.push(rule.create(context, {}).file?.(source));
    } catch (e) {
      pending.push(Promise.reject(e));
    }
  }
  await Promise.all(pending);
  return found;
}

function sourceOf(content: string, file: { filePath: string; ext: string }): SecretLintSourceCode {
  let lines: StructuredSource | null = null;
  const at = () => (lines ??= new StructuredSource(content));
  return {
    hasBOM: false,
    content,
    filePath: file.filePath,
    physicalFilePath: undefined,
    contentType: "text",
    ext: file.ext,
    getFilePath: () => file.filePath,
    getPhysicalFilePath: () => undefined,
    locationToRange: (loc) => at().locationToRange(loc) as never,
    rangeToLocation: (range) => at().rangeToLocation(range as [number, number]),
    positionToIndex: (pos) => at().positionToIndex(pos),
    indexToPosition: (index) => at().indexToPosition(index),
  };
}
