/**
 * An index of the texts read in one session, for the echo check (core/echo.ts; docs/design.md §
 * Derivation and taint: "Recalled text re-ingested resolves to the original record"): a write looks
 * up the read records its content may repeat instead of comparing it with every one of them, so
 * the check costs what the content's length costs, not what the session's length costs. The index
 * only narrows the records {@link findEchoes} is given: for any content, the records it returns
 * include every record {@link findEchoes} would pick from all of them, so calling it on those
 * alone gives the same result. Pure: no I/O; imports only from src/core.
 */
import { type EchoPrint, echoPrint, echoWork } from './echo.js';

/** The `contained` test's minimum loose length: a record's loose text is indexed by its first this many UTF-16 units. */
const SHINGLE = 16;

/** The `contained` test's minimum number of significant words of the content. */
const MIN_WORDS = 4;

/** What an entry keeps of its record's text: its loose form and significant words (null: no text). */
type Entry = { readonly id: string; readonly print: Pick<EchoPrint, 'loose' | 'tokens'> | null };

/** Append `i` to the list at `k`. */
function post(m: Map<string, number[]>, k: string, i: number): void {
  const l = m.get(k);
  if (l === undefined) m.set(k, [i]);
  else l.push(i);
}

/**
 * The texts read in a session, in read order, keyed three ways: by exact-echo hash, by the first
 * {@link SHINGLE} units of the loose form, and by each significant word (an inverted index).
 * Adding a record costs O(|its text|); memory is linear in the texts added.
 */
export class EchoIndex {
  private readonly entries: Entry[] = [];
  private readonly byHash = new Map<string, number[]>();
  private readonly byShingle = new Map<string, number[]>();
  private readonly byWord = new Map<string, number[]>();
  /** the print of the last content looked up: a write adds the very text it looked up. */
  private looked: EchoPrint | null = null;

  /** What the index holds of its texts, in UTF-16 units (loose forms and significant words). */
  private held = 0;

  /** How many records were added (with or without text). */
  get size(): number {
    return this.entries.length;
  }

  /** The UTF-16 units of text the index holds (its memory grows with this). */
  get weight(): number {
    return this.held;
  }

  /** Add the next record read (`content` null: it has no text, e.g. erased). */
  add(id: string, content: string | null): void {
    const i = this.entries.length;
    if (content === null) {
      this.entries.push({ id, print: null });
      return;
    }
    const p = this.looked?.content === content ? this.looked : echoPrint(content);
    if (p !== this.looked) echoWork.prepared += 1;
    this.entries.push({ id, print: { loose: p.loose, tokens: p.tokens } });
    this.held += p.loose.length + [...p.tokens].reduce((n, t) => n + t.length, 0);
    post(this.byHash, p.hash, i);
    if (p.loose.length >= SHINGLE) post(this.byShingle, p.loose.slice(0, SHINGLE), i);
    for (const t of p.tokens) post(this.byWord, t, i);
  }

  /**
   * The records `content` may repeat, as {@link findEchoes} decides it: every record added with
   * the same exact-echo hash, every one whose loose text the content's contains, every one whose
   * significant words include all of the content's ({@link MIN_WORDS}+ of them).
   *
   * Cost: O(|content|) look-ups, plus one comparison per record sharing the content's exact hash,
   * per record whose loose text starts with a {@link SHINGLE}-unit run of the content's, and per
   * record holding the content's rarest significant word.
   *
   * @returns the records' ids, in the order they were added.
   */
  candidates(content: string): string[] {
    const q = (this.looked = echoPrint(content));
    const hit = new Set<number>(this.byHash.get(q.hash) ?? []);
    echoWork.compared += hit.size;
    if (this.byShingle.size > 0) {
      for (let at = 0; at + SHINGLE <= q.loose.length; at++) {
        for (const i of this.byShingle.get(q.loose.slice(at, at + SHINGLE)) ?? []) {
          const e = this.entries[i]?.print;
          echoWork.compared += 1;
          if (e !== undefined && e !== null && e.loose.length <= q.loose.length - at && q.loose.startsWith(e.loose, at)) hit.add(i);
        }
      }
    }
    for (const i of this.sharingWords(q.tokens)) hit.add(i);
    return [...hit].sort((a, b) => a - b).map((i) => (this.entries[i] as Entry).id);
  }

  /** The records whose significant words include all of `words` (none when fewer than {@link MIN_WORDS}). */
  private sharingWords(words: ReadonlySet<string>): number[] {
    if (words.size < MIN_WORDS) return [];
    let rarest: number[] | undefined;
    for (const w of words) {
      const l = this.byWord.get(w);
      if (l === undefined) return [];
      if (rarest === undefined || l.length < rarest.length) rarest = l;
    }
    return (rarest ?? []).filter((i) => {
      echoWork.compared += 1;
      const tokens = this.entries[i]?.print?.tokens;
      return tokens !== undefined && [...words].every((w) => tokens.has(w));
    });
  }
}
