/**
 * Models wrap JSON in code fences, lead with prose or trail with comments.
 * Take the first balanced JSON object (or array) found in the reply; null
 * when there is none that parses.
 */
export function extractJson(reply: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(reply);
  const candidates = fenced ? [fenced[1], reply] : [reply];
  for (const text of candidates) {
    const trimmed = text.trim();
    try {
      return JSON.parse(trimmed);
    } catch {
      /* look for an embedded object below */
    }
    for (let start = trimmed.search(/[[{]/); start >= 0; start = nextStart(trimmed, start)) {
      const end = matchingEnd(trimmed, start);
      if (end < 0) continue;
      try {
        return JSON.parse(trimmed.slice(start, end + 1));
      } catch {
        /* try the next opening bracket */
      }
    }
  }
  return null;
}

function nextStart(text: string, from: number): number {
  const rest = text.slice(from + 1).search(/[[{]/);
  return rest < 0 ? -1 : from + 1 + rest;
}

/** Index of the bracket closing the one at `start`, skipping strings; -1 if unbalanced. */
function matchingEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
