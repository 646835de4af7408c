// Attacker-reachable text made visible: every invisible, format, bidi, variation-selector and tag
// character becomes a marked `\uXXXX` badge (so text cannot reorder itself — "\u202E100-WN" never
// reads as NW-001 — or hide characters), and a check of argument values that names every
// non-ASCII character by code point and flags letters of another script among Latin ones
// (Greek ο in "NW-0ο1"). ui.js h() passes every string it inserts through visibleText(), so
// every page gets it. Imports nothing (ui.js imports this).
//
// The character class duplicates MODEL_UNSAFE in src/server/mcp-text.ts (what the MCP server
// escapes for the model): the dashboard is plain browser JS served as is and cannot import a
// TypeScript module. Change both together.
const UNSAFE =
  /[\u0085\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/u;

/** `U+202E` for a character. */
export const codePoint = (c) => `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** `\u202E` (a surrogate pair for a character outside the BMP, as JSON writes it). */
const escaped = (c) => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).toUpperCase().padStart(4, '0')}`).join('');

/**
 * `text` as DOM: a plain Text node when it holds no unsafe character, else a fragment where each
 * one is a `span.invisible-char` showing its `\uXXXX` escape (title: its code point).
 */
export function visibleText(text) {
  if (!UNSAFE.test(text)) return document.createTextNode(text);
  const frag = document.createDocumentFragment();
  let run = '';
  for (const c of text) {
    if (!UNSAFE.test(c)) {
      run += c;
      continue;
    }
    if (run) frag.append(document.createTextNode(run));
    run = '';
    const mark = document.createElement('span');
    mark.className = 'invisible-char';
    mark.title = `hidden character ${codePoint(c)}`;
    mark.textContent = escaped(c);
    // CSSOM, not a style attribute (the CSP allows no inline style): red-bordered, isolated from the text's direction
    Object.assign(mark.style, { border: '1px solid #b91c1c', borderRadius: '3px', color: '#b91c1c', padding: '0 .15rem', unicodeBidi: 'isolate', direction: 'ltr' });
    frag.append(mark);
  }
  if (run) frag.append(document.createTextNode(run));
  return frag;
}

/** `text` with every unsafe character written as its `\uXXXX` escape (for attributes and plain strings). */
export const visibleString = (text) => String(text).replace(new RegExp(UNSAFE.source, 'gu'), escaped);

const SCRIPTS = ['Latin', 'Greek', 'Cyrillic', 'Armenian', 'Cherokee', 'Georgian', 'Hebrew', 'Arabic', 'Han', 'Hiragana', 'Katakana', 'Hangul', 'Thai', 'Devanagari'].map((s) => [
  s,
  new RegExp(`\\p{Script=${s}}`, 'u'),
]);
const scriptOf = (c) => SCRIPTS.find(([, re]) => re.test(c))?.[0] ?? null;

/**
 * What a person checking `value` (an argument's exact value) must know about its characters: for
 * each distinct non-ASCII character, one line naming it, its code point and script, and whether
 * it sits among Latin letters (a lookalike: "contains Greek ο (U+03BF) among Latin letters").
 * @returns the warning lines ([] for pure ASCII)
 */
export function valueWarnings(value) {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  const latin = /[A-Za-z]/.test(text);
  const seen = new Set();
  const out = [];
  for (const c of text) {
    if (c.codePointAt(0) < 0x80 || seen.has(c)) continue;
    seen.add(c);
    const script = scriptOf(c);
    const shown = UNSAFE.test(c) ? escaped(c) : c;
    if (UNSAFE.test(c)) out.push(`contains the hidden character ${shown} (${codePoint(c)}), which reorders or hides text`);
    else if (script && script !== 'Latin' && latin) out.push(`contains ${script} ${shown} (${codePoint(c)}) among Latin letters`);
    else out.push(`contains the non-ASCII character ${shown} (${codePoint(c)}${script ? `, ${script}` : ''})`);
  }
  return out;
}
