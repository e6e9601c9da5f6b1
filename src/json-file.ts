import { printParseErrorCode, visit } from "jsonc-parser";

// What each of jsonc-parser's error codes means to someone editing the file.
const EXPECTED: Record<string, string> = {
  InvalidSymbol: "unexpected character (strings and names need double quotes; no comments or trailing commas)",
  InvalidNumberFormat: "malformed number",
  PropertyNameExpected: 'expected a "quoted" key (a trailing comma?)',
  ValueExpected: "expected a value (a trailing comma?)",
  ColonExpected: "expected ':' after the key",
  CloseBraceExpected: "expected ',' or '}'",
  CloseBracketExpected: "expected ',' or ']'",
  EndOfFileExpected: "unexpected text after the end of the JSON value",
  InvalidCommentToken: "comments are not allowed in JSON",
  UnexpectedEndOfComment: "comments are not allowed in JSON",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "malformed number",
  InvalidUnicode: "malformed \\u escape",
  InvalidEscapeCharacter: "invalid escape after \\",
  InvalidCharacter: "control character inside a string (write \\n, \\t)",
};

/**
 * Where and why `text` is not JSON: "line 4, column 12: expected ',' or '}'"
 * (both 1-based). Bun's JSON.parse says what but not where, so the text is
 * parsed again with jsonc-parser (comments and trailing commas disallowed,
 * as in JSON), which reports offsets. Null if it finds no error.
 */
export function locateJsonError(text: string): string | null {
  let found: string | null = null;
  // Which bracket is open decides what a missing comma reads as: ',' or '}' against ',' or ']'.
  const open: ("}" | "]")[] = [];
  visit(
    text,
    {
      onObjectBegin: () => void open.push("}"),
      onArrayBegin: () => void open.push("]"),
      onObjectEnd: () => void open.pop(),
      onArrayEnd: () => void open.pop(),
      onError: (code, _offset, _length, line, column) => {
        if (found !== null) return;
        const name = printParseErrorCode(code);
        const what = name === "CommaExpected" ? `expected ',' or '${open.at(-1) ?? "}"}'` : (EXPECTED[name] ?? name);
        found = `line ${line + 1}, column ${column + 1}: ${what}`;
      },
    },
    { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
  );
  return found;
}

/** JSON.parse, with a failure's message naming line and column (Error.message is "line L, column C: ..."). */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    if (text.trim() === "") throw new Error("empty file (write {} for an empty configuration)");
    throw new Error(locateJsonError(text) ?? (e as Error).message.replace(/^JSON Parse error: /, ""));
  }
}
