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
import { createHash } from 'node:crypto';
import { normalizeText, significantTokens, significantTokensOfNormalized } from './values.js';

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
  return text
    .normalize('NFC')
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n+$/, '');
}

/** Case-, punctuation- and symbol-insensitive form, for the `contained` test only. */
const looseOf = (normalized: string): string => normalized.replace(/[^\p{L}\p{N}@]+/gu, ' ').trim();
const looseKey = (t: string): string => looseOf(normalizeText(t));

/** SHA-256 of a text's {@link echoKey}: exact echoes are found by looking this up. */
const echoHash = (text: string): string => createHash('sha256').update(echoKey(text), 'utf8').digest('base64');

/** What the echo check needs of one text: its exact-echo hash, its loose form and its significant words. */
export interface EchoPrint {
  readonly content: string;
  /** SHA-256 (base64) of its {@link echoKey}. */
  readonly hash: string;
  /** case-, punctuation- and symbol-insensitive form (the `contained` test). */
  readonly loose: string;
  /** its significant words ({@link significantTokens}). */
  readonly tokens: ReadonlySet<string>;
}

/** The {@link EchoPrint} of `content`, in time linear in its length. */
export function echoPrint(content: string): EchoPrint {
  const normalized = normalizeText(content);
  return { content, hash: echoHash(content), loose: looseOf(normalized), tokens: significantTokensOfNormalized(normalized) };
}

/**
 * Per-record preparation, memoised per object (the store's read cache hands out the same frozen
 * object while the row is unchanged): a record's text is normalised, hashed and tokenised once —
 * in time linear in its length — not at every write of the session that read it.
 */
const prepared = new WeakMap<object, EchoPrint>();

/**
 * Work counted for tests: `prepared`, records whose text was normalised and tokenised; `compared`,
 * records a session's echo index compared a content with (core/echo-index.ts).
 */
export const echoWork = { prepared: 0, compared: 0 };

function prepare(r: EchoCandidate & { content: string }): EchoPrint {
  const p = prepared.get(r);
  if (p !== undefined && p.content === r.content) return p;
  echoWork.prepared += 1;
  const q = echoPrint(r.content);
  prepared.set(r, q);
  return q;
}

/**
 * The significant words of a record's text ({@link significantTokens}), memoised per record
 * object like the echo check's other per-record work.
 */
export function recordTokens(r: EchoCandidate & { content: string }): ReadonlySet<string> {
  return prepare(r).tokens;
}

/**
 * Which of `reads` (records read in the session) `content` repeats.
 *
 * Cost: the per-record preparation is done once per record object ({@link prepare}); a call then
 * costs O(|content|) for its own keys plus, per read record, one hash-map insertion and the
 * `contained` test, which looks for the record's loose text only when it is not longer than the
 * content's (a longer text cannot be contained) and stops the word-subset test at the first
 * word of the content the record lacks.
 *
 * @returns `exact`: the first read record with the same text (see {@link echoKey}), or null;
 *   `contained`: other read records whose text it contains or whose significant words it uses.
 */
export function findEchoes<R extends EchoCandidate>(content: string, reads: readonly R[]): { exact: R | null; contained: R[] } {
  if (!reads.some((r) => r.content !== null)) return { exact: null, contained: [] };
  const byHash = new Map<string, R>();
  const preps: Array<[R, EchoPrint]> = [];
  for (const r of reads) {
    if (r.content === null) continue;
    const p = prepare(r as R & { content: string });
    if (!byHash.has(p.hash)) byHash.set(p.hash, r);
    preps.push([r, p]);
  }
  const exact = byHash.get(echoHash(content)) ?? null;
  const contained: R[] = [];
  let loose: string | null = null;
  let tokens: string[] | null = null;
  for (const [r, p] of preps) {
    if (r === exact) continue;
    loose ??= looseKey(content);
    tokens ??= [...significantTokens(content)];
    const within = p.loose.length >= 16 && p.loose.length <= loose.length && loose.includes(p.loose);
    if (within || (tokens.length >= 4 && tokens.every((t) => p.tokens.has(t)))) contained.push(r);
  }
  return { exact, contained };
}
