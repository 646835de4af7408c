/**
 * Token-level matching of argument values against texts, in linear time (docs/design.md § Action
 * gate: value-level provenance). See src/core/values.ts for the rules; this module is the
 * machinery.
 *
 * Text is normalised ({@link normalizeText}) and cut into tokens ({@link tokenize}): an identifier
 * *run* — a maximal sequence of non-delimiter characters — or a single delimiter character.
 * Delimiters are few and explicit: white space; hard delimiters `( ) [ ] { } < > " \` « » “ ” ‘ ’ „`
 * and currency signs `$ € £ ¥`; soft delimiters `. , : ; ! ? '`, which continue a run only
 * between two run characters (`acme.co.uk`, `5,000.00`, `https://x/y`; a sentence-final `.` ends
 * it). Everything else is a run character: letters, digits, combining marks, `_ - @ / + # = % ~ &
 * * ^ | \\` and other symbols — so no part of `acme_ap@outlook.com`, `inv_1200` or `i̇sbank` is a
 * run of its own. A value occurs in a text when its
 * token sequence is a contiguous part of the text's token sequence. A text is prepared once
 * ({@link prepareText}, memoised per record by the store) into a per-text vocabulary and an
 * array of token ids; a decision's values are compiled once into an Aho–Corasick automaton over
 * token ids ({@link ValueMatcher}), so scanning all texts costs O(total tokens of the texts +
 * total tokens of the values + number of (value, text) hits) — never a walk over every
 * occurrence of every value.
 */
import { decimalOfText } from './decimal.js';

/**
 * Normalise text for value matching: Unicode NFC (canonical equivalence only — no
 * compatibility folding, so full-width look-alikes stay different), lower case (identifiers are
 * case-insensitive), white space collapsed. Nothing else is folded: `_`, `-`, `.`, `@` stay
 * part of identifiers.
 */
export function normalizeText(s: string): string {
  return s.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Character classes: a run character, a hard delimiter (white space, brackets, quotes, currency signs), a soft delimiter. */
const RUN = 0;
const HARD = 1;
const SOFT = 2;
const HARD_CHARS = '()[]{}<>"«»“”„$€£¥';
/** `’` is the usual apostrophe of word-processed names (D’Angelo) and a backtick can sit inside a path: between run characters they are part of the run. */
const SOFT_CHARS = ".,:;!?'‘’`";
const ASCII_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) if (c <= 32 || c === 127) ASCII_CLASS[c] = /\s/.test(String.fromCharCode(c)) ? HARD : RUN;
for (const c of HARD_CHARS) if (c.charCodeAt(0) < 128) ASCII_CLASS[c.charCodeAt(0)] = HARD;
for (const c of SOFT_CHARS) if (c.charCodeAt(0) < 128) ASCII_CLASS[c.charCodeAt(0)] = SOFT;
const WIDE_HARD = new Set([...HARD_CHARS].filter((c) => c.charCodeAt(0) >= 128).map((c) => c.codePointAt(0) as number));
const WIDE_SOFT = new Set([...SOFT_CHARS].filter((c) => c.charCodeAt(0) >= 128).map((c) => c.codePointAt(0) as number));
const SPACE = /^\s$/u;
/** Non-ASCII code points: 0 not yet classified, else class + 1. */
const WIDE_CLASS = new Uint8Array(0x110000);

/** The class of a code point: {@link SOFT} and {@link HARD} are few and explicit; everything else — letters, digits, combining marks, `_ - @ / + # = % ~ & * ^ | \\`, other symbols — is a run character. */
function classOf(cp: number): number {
  if (cp < 128) return ASCII_CLASS[cp] as number;
  let k = WIDE_CLASS[cp] as number;
  if (k === 0) {
    k = (WIDE_SOFT.has(cp) ? SOFT : WIDE_HARD.has(cp) || SPACE.test(String.fromCodePoint(cp)) ? HARD : RUN) + 1;
    WIDE_CLASS[cp] = k;
  }
  return k - 1;
}

const width = (cp: number): number => (cp > 0xffff ? 2 : 1);

/**
 * Cut normalised text into tokens, in order: identifier runs — maximal sequences of run
 * characters, where a soft delimiter (`. , : ; ! ? ' ‘ ’` backtick) between two run characters
 * continues the run (`acme.co.uk`, `5,000.00`, `https://x/y`, `o'brien`, `d’angelo`) — and single delimiter characters
 * (a space, `(`, `$`, a sentence-final `.`).
 * @param emit - called per token with `run` true for an identifier run.
 */
export function tokenize(s: string, emit: (token: string, run: boolean) => void): void {
  let i = 0;
  while (i < s.length) {
    const cp = s.codePointAt(i) as number;
    if (classOf(cp) !== RUN) {
      emit(s.slice(i, i + width(cp)), false);
      i += width(cp);
      continue;
    }
    const start = i;
    i += width(cp);
    while (i < s.length) {
      const c = s.codePointAt(i) as number;
      const k = classOf(c);
      if (k === RUN) i += width(c);
      else if (k === SOFT && i + 1 < s.length && classOf(s.codePointAt(i + 1) as number) === RUN) i += 1;
      else break;
    }
    emit(s.slice(start, i), true);
  }
}

/** A text prepared for matching: its token ids over its own vocabulary, and the amounts it writes. */
export interface MatchText {
  readonly vocab: readonly string[];
  readonly tokens: Int32Array;
  /** canonical decimals of the runs that are amounts (src/core/decimal.ts), each once. */
  readonly amounts: readonly string[];
}

/**
 * Prepare a text: normalise, tokenize, collect its amounts. An amount is a run in the amount
 * grammar (`5,000.00`, `1200`) not directly after a `.` or `,` (`.5` is no 5).
 */
export function prepareText(text: string): MatchText {
  const ids = new Map<string, number>();
  const vocab: string[] = [];
  const tokens: number[] = [];
  const amounts = new Set<string>();
  let prev = '';
  tokenize(normalizeText(text), (t, run) => {
    let id = ids.get(t);
    if (id === undefined) {
      id = vocab.length;
      ids.set(t, id);
      vocab.push(t);
    }
    tokens.push(id);
    if (run && prev !== '.' && prev !== ',') {
      const c = t.charCodeAt(0);
      const d = c >= 48 && c <= 57 ? decimalOfText(t) : null;
      if (d !== null) amounts.add(d);
    }
    prev = t;
  });
  return { vocab, tokens: Int32Array.from(tokens), amounts: [...amounts] };
}

/** The tokens of a value's normalised text, or null when it has no identifier run (it can be supplied by nothing). */
export function valueTokens(value: string): string[] | null {
  const out: string[] = [];
  let runs = 0;
  tokenize(normalizeText(value), (t, run) => {
    out.push(t);
    if (run) runs++;
  });
  return runs > 0 ? out : null;
}

interface Node {
  next: Map<number, Node> | null;
  fail: Node | null;
  /** nearest node on the fail chain that ends a pattern. */
  out: Node | null;
  /** indices of the patterns ending here. */
  readonly values: number[];
  /** the scan that last reported this node. */
  stamp: number;
}

const node = (): Node => ({ next: null, fail: null, out: null, values: [], stamp: 0 });

/**
 * One pattern per value: its token sequence, or its canonical amount; both null: supplied by
 * nothing. `spaced`: the token sequence of the value with each `_` written as a space, also
 * accepted (a key `trial_balance` is supplied by "trial balance" — whole runs of the text, so no
 * part of a longer identifier such as `acme_ap@x.com` can supply `ap@x.com`).
 */
export interface Pattern {
  readonly tokens: readonly string[] | null;
  readonly amount: string | null;
  readonly spaced?: readonly string[] | null;
}

/**
 * The values of one decision compiled for matching: an Aho–Corasick automaton over token ids for
 * token patterns, a map for amounts. {@link scan} reports each pattern found in a text once; the
 * output chain of each automaton node is walked at most once per text.
 */
export class ValueMatcher {
  private readonly ids = new Map<string, number>();
  private readonly root = node();
  private readonly amounts = new Map<string, number[]>();
  private stamp = 0;
  /** steps of the last {@link scan}: transitions, fail-link steps and reported nodes. */
  ops = 0;

  constructor(patterns: readonly Pattern[]) {
    patterns.forEach((p, i) => {
      if (p.amount !== null) this.amounts.set(p.amount, [...(this.amounts.get(p.amount) ?? []), i]);
      else if (p.tokens !== null && p.tokens.length > 0) {
        this.insert(p.tokens, i);
        if (p.spaced && p.spaced.length > 0) this.insert(p.spaced, i);
      }
    });
    this.link();
  }

  private insert(tokens: readonly string[], index: number): void {
    let n = this.root;
    for (const t of tokens) {
      let id = this.ids.get(t);
      if (id === undefined) {
        id = this.ids.size;
        this.ids.set(t, id);
      }
      n.next ??= new Map();
      let m = n.next.get(id);
      if (!m) {
        m = node();
        n.next.set(id, m);
      }
      n = m;
    }
    n.values.push(index);
  }

  /** Fail and output links, breadth first. */
  private link(): void {
    const queue: Node[] = [];
    for (const c of this.root.next?.values() ?? []) {
      c.fail = this.root;
      queue.push(c);
    }
    for (let q = 0; q < queue.length; q++) {
      const u = queue[q] as Node;
      for (const [sym, v] of u.next ?? []) {
        let f = u.fail;
        while (f !== null && !f.next?.has(sym)) f = f.fail;
        const target = f?.next?.get(sym) ?? this.root;
        v.fail = target;
        v.out = target.values.length > 0 ? target : target.out;
        queue.push(v);
      }
    }
  }

  /**
   * Report every pattern that occurs in `text`, each once.
   * @param hit - called with the pattern's index.
   */
  scan(text: MatchText, hit: (index: number) => void): void {
    const stamp = ++this.stamp;
    let ops = 0;
    for (const a of text.amounts) {
      ops++;
      for (const i of this.amounts.get(a) ?? []) hit(i);
    }
    if (this.root.next !== null) {
      const sym = new Int32Array(text.vocab.length);
      for (let j = 0; j < text.vocab.length; j++) sym[j] = this.ids.get(text.vocab[j] as string) ?? -1;
      let state = this.root;
      for (let k = 0; k < text.tokens.length; k++) {
        const c = sym[text.tokens[k] as number] as number;
        ops++;
        if (c < 0) {
          state = this.root;
          continue;
        }
        while (state !== this.root && !state.next?.has(c)) {
          state = state.fail as Node;
          ops++;
        }
        state = state.next?.get(c) ?? this.root;
        for (let n: Node | null = state.values.length > 0 ? state : state.out; n !== null && n.stamp !== stamp; n = n.out) {
          n.stamp = stamp;
          ops++;
          for (const i of n.values) hit(i);
        }
      }
      ops += text.vocab.length;
    }
    this.ops = ops;
  }
}
