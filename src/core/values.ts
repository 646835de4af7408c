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

/** Flatten `args` to leaf values (strings and finite numbers). Booleans, null and empty strings carry no value. */
export function argumentValues(args: Readonly<Record<string, unknown>>): ArgumentValue[] {
  const out: ArgumentValue[] = [];
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'string') {
      if (v.trim() === '') return;
      const n = /^\s*-?\d[\d,]*(\.\d+)?\s*$/.test(v) ? Number(v.replace(/,/g, '')) : null;
      out.push({ argument: path, value: v, numeric: n !== null && Number.isFinite(n) ? n : null });
    } else if (typeof v === 'number' && Number.isFinite(v)) {
      out.push({ argument: path, value: String(v), numeric: v });
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${path}[${i}]`));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, path ? `${path}.${k}` : k);
    }
  };
  walk(args, '');
  return out;
}

/** Normalise text for matching: NFKC, lower case, `_`/`-` as spaces, collapsed white space. */
export function normalizeText(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/[_\-\s]+/g, ' ').trim();
}

const isWordChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}]/u.test(c);

function containsOnBoundary(haystack: string, needle: string): boolean {
  if (needle === '') return false;
  let from = 0;
  for (;;) {
    const i = haystack.indexOf(needle, from);
    if (i < 0) return false;
    const before = haystack[i - 1];
    const after = haystack[i + needle.length];
    const startOk = !isWordChar(needle[0]) || !isWordChar(before);
    const endOk = !isWordChar(needle[needle.length - 1]) || !isWordChar(after);
    if (startOk && endOk) return true;
    from = i + 1;
  }
}

/** Numbers written in `text` ("$5,000", "5000.00", "1 200" is two numbers). */
export function numbersIn(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/(?<![\p{L}\p{N}])\d[\d,]*(?:\.\d+)?/gu)) {
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

/** Does `text` supply `value`? */
export function supplies(text: MatchText, value: ArgumentValue): boolean {
  if (value.numeric !== null && text.numbers.includes(value.numeric)) return true;
  return containsOnBoundary(text.normalized, normalizeText(value.value));
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

/** A text a number may come from, with whether the gate would trust it. */
export interface NumberSource {
  readonly id: string | 'user_turn';
  readonly numbers: readonly number[];
}

/**
 * Find `target = a * b` or `target = a + b` with `a`, `b` numbers written in the given sources
 * (the user's turn and trusted records). Deterministic: the first pair in source order.
 * Used only when no trusted text supplies the number itself (e.g. "50 units at $10" → 500).
 *
 * @returns the operation and the two operands, each with every source that writes it, or null.
 */
export function findComputation(target: number, sources: readonly NumberSource[]): { op: '*' | '+'; a: number; b: number } | null {
  const nums: number[] = [];
  for (const s of sources) for (const n of s.numbers) if (!nums.includes(n)) nums.push(n);
  if (nums.length > 200) nums.length = 200;
  const eq = (x: number): boolean => Math.abs(x - target) <= 1e-9 * Math.max(1, Math.abs(target));
  for (const op of ['*', '+'] as const) {
    for (let i = 0; i < nums.length; i++) {
      for (let j = i; j < nums.length; j++) {
        const a = nums[i] as number;
        const b = nums[j] as number;
        if (i === j && !sources.some((s) => s.numbers.filter((n) => n === a).length > 1)) continue;
        if (eq(op === '*' ? a * b : a + b)) return { op, a, b };
      }
    }
  }
  return null;
}
