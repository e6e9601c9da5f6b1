/**
 * Word handling shared by the full-text query builder and the offline
 * embedder, so both agree on what a "word" is.
 */

// Question and glue words carry no topic; keeping them in an OR query only
// drags in unrelated rows.
export const STOP_WORDS = new Set(
  (
    "a an and are as at be been but by can could did do does doing for from had has have how i if in into is it its " +
    "me my of on or our she he her his him so that the their them then there these they this to was we were what when " +
    "where which who whom why will with would you your yours about after again all also am any because before being " +
    "both each few further here just more most no nor not now only other over own same should some such than too under " +
    "until up very while s t don didn doesn isn wasn weren won let lets ok okay yes"
  ).split(" "),
);

/** Lower-cased words (letters and digits of any script), in order. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Topic words: no stop words, no single characters (except digits). */
export function keywords(text: string): string[] {
  return words(text).filter((w) => !STOP_WORDS.has(w) && (w.length > 1 || /\d/.test(w)));
}

/** A light suffix stripper: enough to make "deploying" meet "deployed". */
export function stem(word: string): string {
  if (word.length <= 4) return word;
  for (const suffix of ["ations", "ation", "ingly", "ings", "ing", "edly", "ies", "ied", "ed", "es", "ly", "s"]) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      const base = word.slice(0, -suffix.length);
      return suffix === "ies" || suffix === "ied" ? `${base}y` : base;
    }
  }
  return word;
}

/** "1 memory", "2 memories", "1 learning", "0 learnings": counts shown to people and agents read as English. */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${plural(n, one, many)}`;
}

/** The noun alone, for lists that follow it: "unknown field x", "unknown fields x, y". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return n === 1 ? one : many;
}
