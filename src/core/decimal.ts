/**
 * Exact decimals for amounts (docs/design.md § Known limits: "amounts compare as exact
 * decimals"). An amount is kept as its canonical decimal string — integer part without leading
 * zeros (`0` when empty), fraction without trailing zeros, no point when the fraction is empty —
 * so two amounts are equal exactly when their canonical strings are. Arithmetic is on BigInt
 * scaled values: no precision is lost at any magnitude. Nothing here uses a double.
 */

/** A written amount: digits, optional `,` thousands groups, optional `.` fraction. No sign, no exponent, no leading zero (`0500` is an identifier, not an amount). */
const AMOUNT_TEXT = /^(?:[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*|0)(?:\.\d+)?$/;
/** An amount argument written as a string may carry one leading currency symbol: `$5,000.00`. */
const AMOUNT_ARGUMENT = /^\s*[$€£¥]?\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*$/;

/** Canonical form of a digit string with `scale` fractional digits (`digits` without sign). */
function canonical(digits: string, scale: number): string {
  const padded = digits.length <= scale ? '0'.repeat(scale - digits.length + 1) + digits : digits;
  let int = padded.slice(0, padded.length - scale).replace(/^0+(?=\d)/, '');
  const frac = padded.slice(padded.length - scale).replace(/0+$/, '');
  if (int === '') int = '0';
  if (frac === '') return int;
  return `${int}.${frac}`;
}

/**
 * The canonical decimal of amount text as written in a record or the user's turn (`5,000.00` →
 * `5000`), or null when the text is no amount: `12,50` (a comma only groups thousands), `0500`
 * (leading zero), `-5`, `5e3`, `1,2,0,0`.
 */
export function decimalOfText(text: string): string | null {
  if (!AMOUNT_TEXT.test(text)) return null;
  const plain = text.replace(/,/g, '');
  const dot = plain.indexOf('.');
  return dot < 0 ? canonical(plain, 0) : canonical(plain.slice(0, dot) + plain.slice(dot + 1), plain.length - dot - 1);
}

/**
 * The canonical decimal of an amount argument: a JSON number (its shortest round-trip decimal,
 * exponent form expanded exactly) or a string in the amount grammar with an optional leading
 * currency symbol (`$5,000`). Null for a negative number, a non-finite one, or a string that is
 * no amount — such a value is supplied by nothing.
 */
export function decimalOfArgument(v: string | number): string | null {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? decimalOfNumberText(String(v)) : null;
  const m = AMOUNT_ARGUMENT.exec(v);
  return m ? decimalOfText(m[1] as string) : null;
}

/** `String(n)` of a finite non-negative number (`123`, `0.5`, `1e+21`, `1.5e-7`) as a canonical decimal. */
function decimalOfNumberText(s: string): string | null {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(s);
  if (!m) return null;
  const int = m[1] as string;
  const frac = m[2] ?? '';
  const exp = m[3] !== undefined ? Number.parseInt(m[3], 10) : 0;
  const digits = int + frac;
  const scale = frac.length - exp;
  return scale >= 0 ? canonical(digits, scale) : canonical(digits + '0'.repeat(-scale), 0);
}

/** Scaled BigInt of a canonical decimal: `12.5` → {n: 125n, scale: 1}. */
function scaled(d: string): { n: bigint; scale: number } {
  const dot = d.indexOf('.');
  return dot < 0 ? { n: BigInt(d), scale: 0 } : { n: BigInt(d.slice(0, dot) + d.slice(dot + 1)), scale: d.length - dot - 1 };
}

/** Exact product of two canonical decimals, canonical. */
export function multiplyDecimals(a: string, b: string): string {
  const x = scaled(a);
  const y = scaled(b);
  return canonical((x.n * y.n).toString(), x.scale + y.scale);
}
