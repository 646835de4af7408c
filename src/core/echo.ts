import { normalizeText, significantTokens } from './values.js';

/**
 * Recalled memory echoed back (docs/design.md § Derivation and taint: "Recalled text re-ingested
 * resolves to the original record, adds no authority and no corroboration"), decided on text
 * alone. Pure: no I/O.
 *
 * An **exact echo** is the same text: equal after {@link echoKey}, a normalisation that cannot
 * hide content — it never drops or folds a character that can carry text (letters, digits,
 * punctuation, symbols, case, invisible format characters such as zero-width or tag characters).
 * An exact echo stores nothing and resolves to the original record.
 *
 * Anything else is new text: a new record of its writer's authority. When it **contains** a read
 * record's text (compared loosely: case, punctuation and symbols ignored, 16+ characters) or uses
 * only the significant words of one (4+ of them), it also derives from that record (an `echo`
 * edge): that can only lower its taint and narrow who may corroborate it — it never hides or
 * replaces any of its content, which is stored as given.
 */

/** The minimal shape of a record the echo check needs. */
export interface EchoCandidate {
  readonly id: string;
  readonly content: string | null;
}

/**
 * The form two texts are compared in for an exact echo: Unicode NFC (canonical equivalence:
 * the same characters, composed), CR LF and lone CR as LF, spaces and tabs at the end of each
 * line removed, line feeds at the end of the text removed. Nothing else changes.
 */
export function echoKey(text: string): string {
  return text.normalize('NFC').replace(/\r\n?/g, '\n').replace(/[ \t]+$/gm, '').replace(/\n+$/, '');
}

/** Case-, punctuation- and symbol-insensitive form, for the `contained` test only. */
const looseKey = (t: string): string => normalizeText(t).replace(/[^\p{L}\p{N}@]+/gu, ' ').trim();

/**
 * Which of `reads` (records read in the session) `content` repeats.
 * @returns `exact`: the first read record with the same text (see {@link echoKey}), or null;
 *   `contained`: other read records whose text it contains or whose significant words it uses.
 */
export function findEchoes<R extends EchoCandidate>(content: string, reads: readonly R[]): { exact: R | null; contained: R[] } {
  if (!reads.some((r) => r.content !== null)) return { exact: null, contained: [] };
  const key = echoKey(content);
  let loose: string | null = null;
  let tokens: Set<string> | null = null;
  let exact: R | null = null;
  const contained: R[] = [];
  for (const r of reads) {
    if (r.content === null) continue;
    if (exact === null && echoKey(r.content) === key) {
      exact = r;
      continue;
    }
    loose ??= looseKey(content);
    tokens ??= significantTokens(content);
    const rn = looseKey(r.content);
    const rt = significantTokens(r.content);
    if ((rn.length >= 16 && loose.includes(rn)) || (tokens.size >= 4 && [...tokens].every((t) => rt.has(t)))) contained.push(r);
  }
  return { exact, contained };
}
