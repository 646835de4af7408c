/**
 * Value-level provenance (DESIGN.md § Action gate): which texts supply an action's argument values.
 *
 * Matching is exact on normalised text, on token boundaries: lower-cased, `_`/`-` folded to
 * spaces, white space collapsed. Numbers also match numerically ("5000" matches "$5,000.00").
 * Conservative on purpose: a false match adds a dependency (fail closed); a paraphrased value
 * that does not match is caught by context taint unless the caller narrowed the context.
 */

/** One leaf value of an action's arguments, with its path (`to`, `items[0].sku`). */
export interface ArgumentValue {
  readonly argument: string;
  readonly value: string;
  readonly numeric: number | null;
}

const NUMBER_STRING = /^\s*-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*$/;
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Flatten `args` to leaf values (strings and finite numbers). Booleans, null and empty strings
 * carry no value. Object keys that are not plain identifiers are values too (a payee smuggled
 * in as a key, `{ "ACCT-9": 1200 }`, must be supplied like any other value).
 */
export function argumentValues(args: Readonly<Record<string, unknown>>): ArgumentValue[] {
  const out: ArgumentValue[] = [];
  const str = (v: string, path: string): void => {
    if (v.trim() === '') return;
    const n = NUMBER_STRING.test(v) ? Number(v.replace(/,/g, '')) : null;
    out.push({ argument: path, value: v, numeric: n !== null && Number.isFinite(n) ? n : null });
  };
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'string') str(v, path);
    else if (typeof v === 'number' && Number.isFinite(v)) out.push({ argument: path, value: String(v), numeric: v });
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const p = path ? `${path}.${k}` : k;
        if (!PLAIN_KEY.test(k)) str(k, `${p}{key}`);
        walk(x, p);
      }
    }
  };
  walk(args, '');
  return out;
}

/**
 * Normalise text for value matching: Unicode NFC (canonical equivalence only — no
 * compatibility folding, so full-width look-alikes stay different), lower case, `_` as a space,
 * white space collapsed. Hyphens, dots, `@` are kept: they are part of identifiers.
 */
export function normalizeText(s: string): string {
  return s.normalize('NFC').toLowerCase().replace(/_/g, ' ').replace(/\s+/g, ' ').trim();
}

/** Characters that continue an identifier (account ids, emails, hosts, paths). */
const IDENT_CHAR = /[\p{L}\p{N}\-_@/+:#]/u;
const isIdentChar = (c: string | undefined): boolean => c !== undefined && IDENT_CHAR.test(c);
/** A `.` or `,` inside an identifier/number (followed by an identifier character) continues it. */
const continues = (c: string | undefined, next: string | undefined): boolean => isIdentChar(c) || ((c === '.' || c === ',') && isIdentChar(next));

function containsOnBoundary(haystack: string, needle: string): boolean {
  if (needle === '') return false;
  let from = 0;
  for (;;) {
    const i = haystack.indexOf(needle, from);
    if (i < 0) return false;
    const j = i + needle.length;
    const startOk = !isIdentChar(haystack[i - 1]) && !(haystack[i - 1] === '.' && isIdentChar(haystack[i - 2]));
    const endOk = !continues(haystack[j], haystack[j + 1]);
    if (startOk && endOk) return true;
    from = i + 1;
  }
}

/**
 * Numbers written in `text`: "$5,000", "5000.00", "1200." — commas only as thousands groups
 * ("12,50" is no number); digits inside identifiers or dates ("INV-1200", "2026-11-29") are not
 * amounts; a leading minus is not read (a negative argument never matches a positive text).
 */
export function numbersIn(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/(?<![\p{L}\p{N}\-_/.@#:,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\p{L}\p{N}\-_/@#:]|[.,]\d)/gu)) {
    const n = Number(m[0].replace(/,/g, ''));
    if (Number.isFinite(n)) out.push(n);
  }
  return out;
}

/** Pre-normalised text for repeated matching. */
export interface MatchText {
  readonly normalized: string;
  readonly numbers: readonly number[];
}

export function prepareText(text: string): MatchText {
  return { normalized: normalizeText(text), numbers: numbersIn(text) };
}

/**
 * Does `text` supply `value`? The whole value must occur on identifier boundaries (so
 * `ACCT-1234` is not supplied by `ACCT-1234-5678`, nor `acme.co` by `billing@acme.co.uk`);
 * numbers also match numerically against {@link numbersIn}.
 * @param normalizedValue - `normalizeText(value.value)`, when the caller matches one value against many texts.
 */
export function supplies(text: MatchText, value: ArgumentValue, normalizedValue?: string): boolean {
  if (value.numeric !== null) return value.numeric >= 0 && text.numbers.includes(value.numeric);
  return containsOnBoundary(text.normalized, normalizedValue ?? normalizeText(value.value));
}

/** Significant tokens of a text: words of 3+ characters or containing a digit. */
export function significantTokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of normalizeText(text).matchAll(/[\p{L}\p{N}][\p{L}\p{N}@.]*/gu)) {
    const t = m[0].replace(/\.+$/, '');
    if (t.length >= 3 || /\d/.test(t)) out.add(t);
  }
  return out;
}

/**
 * Find `target = a * b` with `a` and `b` two numbers written in the user's current turn
 * ("reorder 50 units at $10 each" → 500), exact to the cent. Used only when no trusted text
 * supplies the number itself. Deliberately narrow: no sums, no numbers from memory.
 *
 * @returns the two operands, or null.
 */
export function findProduct(target: number, userTurnNumbers: readonly number[]): { op: '*'; a: number; b: number } | null {
  const cents = (x: number): number => Math.round(x * 100);
  if (!(target > 0) || !Number.isFinite(target)) return null;
  const nums = userTurnNumbers.slice(0, 50);
  for (let i = 0; i < nums.length; i++) {
    for (let j = i + 1; j < nums.length; j++) {
      const a = nums[i] as number;
      const b = nums[j] as number;
      if (Math.abs(a * b) < Number.MAX_SAFE_INTEGER / 100 && cents(a * b) === cents(target) && Math.abs(a * b - target) < 0.005) return { op: '*', a, b };
    }
  }
  return null;
}

