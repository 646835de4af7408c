/**
 * Deterministic synthetic text for the performance suite: a Zipf-distributed vocabulary of
 * pseudo-words (so term frequencies look like natural language), records of 12–30 words with
 * an entity name and an amount, and queries drawn from stored records.
 */

import { mulberry32 as rng } from '../src/bench/stats.js';

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'si', 'pe', 'du', 'ga', 'ho', 'ji', 'be', 'zu', 'fa', 'ci', 'wo', 'ly', 'qe'];

/** The corpus: vocabulary size, Zipf exponent and a seed fix every text it makes. */
export class Corpus {
  readonly words: readonly string[];
  private readonly cdf: Float64Array;
  private readonly rand: () => number;

  constructor(opts: { vocabulary?: number; exponent?: number; seed?: number } = {}) {
    const v = opts.vocabulary ?? 30_000;
    const s = opts.exponent ?? 1.0;
    const r = rng((opts.seed ?? 42) ^ 0x5bd1e995);
    const seen = new Set<string>();
    const words: string[] = [];
    while (words.length < v) {
      const n = 2 + Math.floor(r() * 3);
      let w = '';
      for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
      if (!seen.has(w)) {
        seen.add(w);
        words.push(w);
      }
    }
    this.words = words;
    this.cdf = new Float64Array(v);
    let acc = 0;
    for (let i = 0; i < v; i++) {
      acc += 1 / Math.pow(i + 1, s);
      this.cdf[i] = acc;
    }
    for (let i = 0; i < v; i++) this.cdf[i] = (this.cdf[i] as number) / acc;
    this.rand = rng(opts.seed ?? 42);
  }

  /** A random number in [0, 1) from the corpus's own stream. */
  random(): number {
    return this.rand();
  }

  /** A word by Zipf rank. */
  word(): string {
    const u = this.rand();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo] as string;
  }

  /** A record's text: 12–30 Zipf words, an entity (`vendor1234`, one token) and an amount. */
  record(i: number): string {
    const n = 12 + Math.floor(this.rand() * 19);
    const parts: string[] = [];
    for (let k = 0; k < n; k++) parts.push(this.word());
    const at = Math.floor(this.rand() * parts.length);
    parts.splice(at, 0, `vendor${i % 50_000}`, `amount ${100 + (i % 9_900)}`);
    return parts.join(' ');
  }

  /**
   * A query: three words drawn from a stored text, skipping the 50 most frequent words of the
   * vocabulary (stop-word-like); about half the time one of them is the text's entity.
   */
  query(text: string): string {
    const stop = new Set(this.words.slice(0, 50));
    const toks = text.split(/\s+/).filter((t) => !stop.has(t) && !/^\d+$/.test(t) && t !== 'amount');
    const out: string[] = [];
    for (let k = 0; k < 3 && toks.length > 0; k++) out.push(toks[Math.floor(this.rand() * toks.length)] as string);
    return out.join(' ');
  }
}
