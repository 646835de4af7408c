/**
 * JSON number literals a double cannot hold (docs/design.md § Known limits): a number in a JSON
 * text is parsed to an IEEE-754 double, so `6228480012345677999` becomes 6228480012345678000 and
 * `500.000000000000001` becomes 500 — the gate would check (and store) a value other than the one
 * an executor reading the same JSON exactly would act on. {@link inexactNumberLiteral} finds the
 * first literal whose decimal value differs from the value its double prints as (`String(n)`,
 * the shortest round-trip decimal, which is what memauth checks, hashes and stores), or whose
 * magnitude is past 2^53 − 1 (integers there are not all representable), or which overflows to
 * ±Infinity. `0.1`, `1e2`, `1.50`, `-0` are exact in this sense.
 *
 * Pure; no imports. Linear in the text's length; nothing is expanded digit by digit, so a literal
 * with a huge exponent (`1e999999999`) costs no more than its length.
 */

/** A string literal (skipped) or a number literal outside strings, in a valid JSON text. */
const TOKENS = /"(?:[^"\\]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
/** The parts of a number literal or of `String(n)`. */
const PARTS = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * A decimal number in normal form: its significant digits without leading or trailing zeros and
 * the power of ten of the last one (`12.50` → `125`, -1). Zero is `{digits: '', exp: 0}`. The
 * exponent is a double: exact up to 2^53, and a literal with a longer exponent overflows or
 * underflows its double anyway.
 */
function normal(text: string): { sign: string; digits: string; exp: number } | null {
  const m = PARTS.exec(text);
  if (!m) return null;
  const int = m[2] as string;
  const frac = m[3] ?? '';
  let digits = (int + frac).replace(/^0+/, '');
  let exp = (m[4] !== undefined ? Number(m[4]) : 0) - frac.length;
  const trimmed = digits.replace(/0+$/, '');
  exp += digits.length - trimmed.length;
  digits = trimmed;
  if (digits === '') return { sign: '', digits: '', exp: 0 };
  return { sign: m[1] as string, digits, exp };
}

/** A number literal a double does not hold exactly: where it is, what it says, and what it became. */
export interface InexactNumber {
  /** the literal as written (at most 64 characters, then `…`). */
  readonly literal: string;
  /** offset of the literal in the text (UTF-16 code units). */
  readonly offset: number;
  /** what the double prints as (`String(n)`): the value that would have been checked. */
  readonly parsed: string;
  readonly why: 'rounded' | 'unsafe_integer' | 'overflow';
}

/**
 * The first number literal of `json` (a valid JSON text) that is not exact (see the module
 * header), or null when every literal is.
 */
export function inexactNumberLiteral(json: string): InexactNumber | null {
  TOKENS.lastIndex = 0;
  for (let m = TOKENS.exec(json); m !== null; m = TOKENS.exec(json)) {
    const lit = m[0];
    if (lit.charCodeAt(0) === 34) continue; // a string
    // no exponent and at most 15 significant digits: a double holds it exactly (the common case, kept cheap)
    if (lit.length <= 17 && !/[eE]/.test(lit) && lit.replace(/^-?0*|\./g, '').length <= 15) continue;
    const n = Number(lit);
    let why: InexactNumber['why'] | null = null;
    if (!Number.isFinite(n)) why = 'overflow';
    else {
      const a = normal(lit);
      const b = normal(String(n));
      if (a === null || b === null || a.digits !== b.digits || a.exp !== b.exp || (a.digits !== '' && a.sign !== b.sign)) why = 'rounded';
      else if (Math.abs(n) > Number.MAX_SAFE_INTEGER) why = 'unsafe_integer';
    }
    if (why !== null) return { literal: lit.length > 64 ? `${lit.slice(0, 64)}…` : lit, offset: m.index, parsed: String(n), why };
  }
  return null;
}
