/**
 * Identifier runs (src/core/match.ts; docs/design.md § Action gate, § Claims and intent):
 * a run is a maximal sequence of non-delimiter characters, delimiters are few and explicit, and
 * no part of a trusted identifier — a suffix after `_`, the rest after a combining mark, the
 * digits of `INV_1200`, a fragment of a path — supplies a value. Also: an amount argument must be
 * a scalar and no argument may be named `{resource}` (pure gate).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decide } from '../src/core/gate.js';
import { normalizeText, tokenize } from '../src/core/match.js';
import { valueProvenance } from '../src/core/provenance.js';
import { argumentShapeProblems, prepareText, supplies } from '../src/core/values.js';
import { argsHashOf } from '../src/index.js';

const id = (value: string) => ({ argument: 'to', value, type: 'identifier' as const, amount: null });
const sup = (text: string, value: string) => supplies(prepareText(text), id(value));
const toks = (s: string): string[] => {
  const out: string[] = [];
  tokenize(normalizeText(s), (t) => out.push(t));
  return out;
};

describe('identifier runs', () => {
  test('the red-team cases: no part of a trusted identifier is supplied', () => {
    const text = 'Remittance advice goes to acme_ap@outlook.com. Bank İSBANK-TR-4471; exports to sftp://h/exports_partner/in.';
    for (const v of ['ap@outlook.com', 'outlook.com', 'acme', 'SBANK-TR-4471', 'sbank-tr-4471', 'partner/in', 'exports_partner/in', 'in', 'h/exports']) assert.equal(sup(text, v), false, v);
    for (const v of ['acme_ap@outlook.com', 'İSBANK-TR-4471', 'i̇sbank-tr-4471', 'sftp://h/exports_partner/in', 'Bank İSBANK-TR-4471']) assert.equal(sup(text, v), true, v);
  });

  test("each former separator is part of the run: `_ ' = % ~ & * ^ | \\`", () => {
    for (const sep of ['_', "'", '=', '%', '~', '&', '*', '^', '|', '\\']) {
      const text = `payee ACME${sep}7781${sep}XY now`;
      assert.equal(sup(text, `ACME${sep}7781${sep}XY`), true, sep);
      for (const v of ['ACME', '7781', 'XY', `7781${sep}XY`, `ACME${sep}7781`]) assert.equal(sup(text, v), false, `${v} inside ${text}`);
    }
  });

  test('combining marks NFC does not merge stay in the run (Devanagari, Thai, İ)', () => {
    assert.equal(sup('payee किसान-7 ok', 'सान-7'), false);
    assert.equal(sup('payee किसान-7 ok', 'किसान-7'), true);
    assert.equal(sup('ที่ดิน-42 ok', 'น-42'), false);
    assert.equal(sup('ที่ดิน-42 ok', 'ที่ดิน-42'), true);
    assert.deepEqual(toks('İSBANK-TR-4471'), ['i̇sbank-tr-4471']);
  });

  test('soft delimiters continue a run only between run characters; hard ones always cut', () => {
    assert.deepEqual(toks('Mail billing@acme.co.uk, pay 5,000.00. See https://x/y: a:b (z) «q» $5'), [
      'mail',
      ' ',
      'billing@acme.co.uk',
      ',',
      ' ',
      'pay',
      ' ',
      '5,000.00',
      '.',
      ' ',
      'see',
      ' ',
      'https://x/y',
      ':',
      ' ',
      'a:b',
      ' ',
      '(',
      'z',
      ')',
      ' ',
      '«',
      'q',
      '»',
      ' ',
      '$',
      '5',
    ]);
    assert.deepEqual(toks("o'brien's acct_1. x..y"), ["o'brien's", ' ', 'acct_1', '.', ' ', 'x', '.', '.', 'y']);
    assert.equal(normalizeText('  ACCT_12\u00a0\n 34 '), 'acct_12 34', '`_` is not folded');
    // a value's `_` may be written as a space in the text (whole runs), never the other way round
    // a key of letter words may be written with spaces; nothing with digits, leading, trailing or doubled `_`
    assert.equal(sup('report trial balance', 'trial_balance'), true);
    assert.equal(sup('pay ACCT 1234', 'acct_1234'), false);
    assert.equal(sup('pay ACCT_1234', 'acct 1234'), false);
    assert.equal(sup('grant read access to alice', 'alice_'), false);
    assert.equal(sup('grant read access to alice', '_alice'), false);
    assert.equal(sup('acme ap', 'acme__ap'), false);
    assert.equal(sup('Contact Jane jdoe@gmail.com', 'jane_jdoe@gmail.com'), false);
    // the typographic apostrophe and the backtick join a run like `'`
    assert.equal(sup('mail o’brien@acme-payables.com now', 'brien@acme-payables.com'), false);
    assert.equal(sup('mail o’brien@acme-payables.com now', 'o’brien@acme-payables.com'), true);
    assert.equal(sup('user D’Angelo', 'angelo'), false);
    assert.equal(sup('user D‘Angelo', 'angelo'), false);
    assert.equal(sup('to s3://acme-exports/`date`/q3 daily', '/q3'), false);
  });

  test('digits inside an identifier are never an amount; written amounts still are', () => {
    const amount = (text: string) => prepareText(text).amounts;
    for (const t of ['invoice INV_1200', 'ref 1200_A', 'code =1200', 'rate 1200%', 'x~1200', 'a*1200', "n'1200"]) assert.deepEqual(amount(t), [], t);
    assert.deepEqual(amount('Total $5,000.00.'), ['5000']);
    assert.deepEqual(amount('total: 5,000, then (1,200) and €7'), ['5000', '1200', '7']);
    const [p] = valueProvenance({ args: { amount: 1200 } }, { amount: 'amount' }, [{ id: 'm1', text: prepareText('invoice INV_1200') }], null);
    assert.deepEqual(p?.recordIds, []);
  });
});

describe('argument shape', () => {
  const base = (args: Record<string, unknown>) => {
    const action = { type: 'pay', args };
    return {
      action,
      argsHash: argsHashOf(args),
      tier: 'high' as const,
      mode: 'enforce' as const,
      now: '2025-01-01T00:00:00.000Z',
      dependencies: [],
      values: [],
      confirmations: [],
      citedConfirmationId: null,
      threshold: 'trusted_tool_verified' as const,
      argumentTypes: { amount: 'amount' as const },
    };
  };
  test('an amount argument that is an array or object is denied (metadata_missing, amount_not_scalar)', () => {
    for (const amount of [[1200, 1200], { 'ACCT-GOOD-1': 1200 }, [], {}]) {
      assert.deepEqual(argumentShapeProblems({ amount }, { amount: 'amount' }), [{ argument: 'amount', detail: 'amount_not_scalar' }]);
      const r = decide({ ...base({ amount }), tier: 'low' });
      assert.equal(r.outcome, 'deny', JSON.stringify(amount));
      assert.deepEqual(r.reasons, [{ code: 'metadata_missing', memoryIds: [], argument: 'amount', detail: 'amount_not_scalar' }]);
    }
    for (const amount of [1200, '1,200.00']) assert.deepEqual(argumentShapeProblems({ amount }, { amount: 'amount' }), [], String(amount));
    // null or a boolean carries no amount to check (many payment APIs read it as "everything")
    for (const amount of [null, true, false]) assert.deepEqual(argumentShapeProblems({ amount }, { amount: 'amount' }), [{ argument: 'amount', detail: 'amount_not_a_number' }], String(amount));
    assert.deepEqual(argumentShapeProblems({ items: [1, 2] }, { amount: 'amount' }), []);
  });
  test('an argument named {resource} is refused (metadata_missing, argument_not_allowed)', () => {
    const r = decide({ ...base({ '{resource}': 'ACCT-1' }), tier: 'low' });
    assert.deepEqual(r.reasons, [{ code: 'metadata_missing', memoryIds: [], argument: '{resource}', detail: 'argument_not_allowed' }]);
  });
});

describe('property: a value is supplied only by a whole run sequence of the text', () => {
  // Reference tokenizer written from the rule, independent of tokenize(): a run is R+ (S R+)*, anything else one character.
  const R = '[^\\s()\\[\\]{}<>"`«»“”‘’„$€£¥.,:;!?\']';
  const REF = new RegExp(`${R}+(?:[.,:;!?'‘’\`]${R}+)*|[^]`, 'gu');
  const isRun = new RegExp(`^${R}`, 'u');
  const ref = (s: string): string[] => normalizeText(s).match(REF) ?? [];
  const containsSeq = (hay: string[], needle: string[]): boolean => needle.length > 0 && hay.some((_, i) => needle.every((t, j) => hay[i + j] === t));
  const chars = [...'aZ1_-@/+#=%~&*^|\\', '\u0301', '\u0307', 'İ', 'ि', 'ี', 'é', ' ', '.', ',', ':', ';', '!', '?', "'", '(', ')', '"', '$', '€', '«', '“', '\u00a0'];
  const textArb = fc.array(fc.constantFrom(...chars), { maxLength: 30 }).map((cs) => cs.join(''));
  const check = (text: string, value: string): void => {
    const vt = ref(value);
    // a value's `_` may also be written as a space (whole runs of the text only)
    const spaced = /^\p{L}+(?:_\p{L}+)+$/u.test(value) ? ref(value.replace(/_/g, ' ')) : [];
    const expected = vt.some((t) => isRun.test(t)) && (containsSeq(ref(text), vt) || (spaced.some((t) => isRun.test(t)) && containsSeq(ref(text), spaced)));
    assert.equal(sup(text, value), expected, `${JSON.stringify(value)} in ${JSON.stringify(text)}`);
  };

  test('random values', () => fc.assert(fc.property(textArb, textArb, check), { numRuns: 3000 }));
  test('substrings of the text at any offset (sub-identifiers)', () =>
    fc.assert(
      fc.property(textArb, fc.nat(), fc.nat(), (text, i, n) => {
        const cps = [...text];
        const start = cps.length === 0 ? 0 : i % cps.length;
        check(text, cps.slice(start, start + 1 + (n % 12)).join(''));
      }),
      { numRuns: 5000 },
    ));
});
