/**
 * A deterministic embedder for tests and CI — a stand-in, NOT a language model.
 *
 * It hashes features of each word into a fixed number of signed buckets and normalizes the sum:
 * the word itself (after lower-casing, a crude suffix stemmer and a small built-in synonym map
 * that sends e.g. `automobile` and `vehicle` to one concept) and its character trigrams (so
 * spelling variants and names land near each other). The same text always gives the same vector,
 * on every machine, with no download and no network.
 *
 * What it can and cannot show: a paraphrase lands near its target only when the words differ by
 * a synonym in {@link SYNONYM_GROUPS} or share trigrams. The groups were written alongside the
 * retrieval set in data/retrieval-eval/ and cover part of its paraphrases (not all, on purpose), so
 * figures measured with it test the plumbing — index, filters, fusion — and are no claim about
 * any real model's quality. Measure with a real embedder for that.
 *
 * May import: src/core/, src/embed/ (pure: no I/O).
 */
import { normalize } from '../core/vector-math.js';
import { type Embedder, embedderId } from './embedder.js';

/**
 * Words with one meaning for this stand-in: each group's words map to its first word. Written
 * for the retrieval set; general English otherwise.
 */
export const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['car', 'automobile', 'vehicle', 'sedan', 'motor', 'drive'],
  ['dentist', 'dental', 'tooth', 'teeth'],
  ['allergy', 'allergic', 'reaction'],
  ['birthday', 'born', 'birth'],
  ['phone', 'mobile', 'cell', 'call', 'telephone'],
  ['live', 'reside', 'resides', 'home', 'house', 'dwell'],
  ['work', 'employ', 'employed', 'employer', 'job'],
  ['profession', 'occupation', 'career'],
  ['meal', 'dish', 'food', 'eat'],
  ['meeting', 'appointment', 'session'],
  ['board', 'directors'],
  ['flight', 'plane', 'fly', 'airline'],
  ['depart', 'leave', 'departs'],
  ['earn', 'income', 'salary', 'pay', 'wage'],
  ['year', 'annual', 'yearly'],
  ['doctor', 'physician', 'gp'],
  ['hobby', 'pastime', 'enjoy'],
  ['weekend', 'saturday', 'sunday'],
  ['football', 'soccer'],
  ['support', 'cheer', 'fan'],
  ['holiday', 'vacation', 'vacationing', 'trip'],
  ['child', 'kid', 'children', 'kids'],
  ['married', 'spouse', 'husband', 'wife', 'partner'],
  ['exercise', 'workout', 'gym', 'train'],
  ['coffee', 'brew', 'espresso'],
  ['novel', 'book'],
  ['medication', 'medicine', 'tablet', 'pill', 'drug'],
  ['laptop', 'notebook', 'computer'],
  ['apartment', 'flat'],
  ['rent', 'cost', 'monthly'],
  ['wireless', 'wifi'],
  ['password', 'key', 'passcode'],
  ['nickname', 'alias'],
  ['commute', 'travel', 'office'],
  ['fear', 'terrified', 'frighten', 'scared', 'afraid'],
];

export const STOPWORDS: ReadonlySet<string> = new Set(
  'a an the of to for on in at by with is are was be been has have had does do did what which who whom when where how i my me you your it its and or s that this there their they he she his her from as can should would will get got much many most per every each one'.split(
    ' ',
  ),
);

/** Word → concept (the first word of its synonym group). */
const CONCEPT: ReadonlyMap<string, string> = new Map(SYNONYM_GROUPS.flatMap((g) => g.map((w) => [w, g[0] as string] as const)));

/** A crude English suffix stemmer: enough to join `parks`/`park`, `travelling`/`travel`. */
export function stem(w: string): string {
  if (CONCEPT.has(w) || w.length <= 4) return w;
  for (const [suffix, repl] of [
    ['ies', 'y'],
    ['ing', ''],
    ['ed', ''],
    ['es', ''],
    ['s', ''],
  ] as const)
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) return w.slice(0, -suffix.length) + repl;
  return w;
}

/** The words of a text that carry meaning: lower case, letters and digits, stopwords dropped, stemmed, mapped to concepts. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (raw === '' || STOPWORDS.has(raw)) continue;
    const w = CONCEPT.get(raw) ?? stem(raw);
    out.push(CONCEPT.get(w) ?? w);
  }
  return out;
}

/** 32-bit FNV-1a of a string (UTF-16 code units). */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Adds `weight` to the feature's signed bucket. */
function add(v: Float32Array, feature: string, weight: number): void {
  const h = fnv1a(feature);
  const i = h % v.length;
  v[i] = (v[i] as number) + (h & 0x80000000 ? -weight : weight);
}

/**
 * The vector of one text (unit length; zero for a text with no terms).
 *
 * @param text - any text.
 * @param dimensions - the vector length.
 */
export function testVector(text: string, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  for (const t of terms(text)) {
    add(v, `w:${t}`, 1);
    const padded = `^${t}$`;
    for (let i = 0; i + 3 <= padded.length; i++) add(v, `g:${padded.slice(i, i + 3)}`, 0.25);
  }
  return normalize(v);
}

/**
 * The deterministic test embedder (see the module header: a stand-in, not a model).
 *
 * @param dimensions - vector length (default 384).
 * @returns an {@link Embedder} with id `test:hashed-trigrams-synonyms-v1:<dimensions>`.
 * @throws MemauthError INVALID_ARGUMENT for dimensions outside 1…16,000.
 */
export function testEmbedder(dimensions = 384): Embedder {
  const id = embedderId('test', 'hashed-trigrams-synonyms-v1', dimensions);
  return { id, dimensions, embed: async (texts) => texts.map((t) => testVector(t, dimensions)) };
}
