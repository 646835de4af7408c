/**
 * Repeated keys in a JSON object (docs/design.md § Known limits): `JSON.parse` keeps the last of
 * `{"to":"A","to":"B"}` while another reader of the same text — a log, a reviewer, an executor's
 * parser — may keep the first, so the gate would check one value and the action carry another.
 * {@link duplicateKey} finds the first key an object repeats, comparing keys as the strings they
 * decode to (`"to"` and `"\u0074o"` are the same key).
 *
 * Pure; no imports. Linear in the text's length.
 */

/** A string literal, or a structural character outside strings, in a valid JSON text. */
const TOKENS = /"(?:[^"\\]|\\.)*"|[{}[\]:]/g;

/** A key an object of a JSON text repeats. */
export interface DuplicateKey {
  /** the key, decoded (at most 64 characters, then `…`). */
  readonly key: string;
  /** offset of its second occurrence in the text (UTF-16 code units). */
  readonly offset: number;
}

/** The first repeated key of an object in `json` (a valid JSON text), or null when no object repeats one. */
export function duplicateKey(json: string): DuplicateKey | null {
  // one entry per open object or array: the keys seen so far (null for an array)
  const open: Array<Set<string> | null> = [];
  let last: { literal: string; offset: number } | null = null;
  TOKENS.lastIndex = 0;
  for (let m = TOKENS.exec(json); m !== null; m = TOKENS.exec(json)) {
    const tok = m[0];
    if (tok === '{') open.push(new Set());
    else if (tok === '[') open.push(null);
    else if (tok === '}' || tok === ']') open.pop();
    else if (tok === ':') {
      const keys = open[open.length - 1];
      if (keys && last) {
        // only a key is decoded: value strings (a record's content) are merely skipped
        const key = last.literal.includes('\\') ? (JSON.parse(last.literal) as string) : last.literal.slice(1, -1);
        if (keys.has(key)) return { key: key.length > 64 ? `${key.slice(0, 64)}…` : key, offset: last.offset };
        keys.add(key);
      }
    } else {
      last = { literal: tok, offset: m.index };
      continue;
    }
    last = null;
  }
  return null;
}
