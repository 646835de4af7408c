/**
 * Unit and property tests of value-level provenance (src/core/values.ts, match.ts, decimal.ts,
 * provenance.ts; docs/design.md § Action gate, § Claims and intent): identifiers compare as exact
 * strings on token boundaries, amounts as exact decimals, computed amounts only as a marked
 * quantity × unit price, the action's resource is a value, and matching is linear.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decimalOfArgument, decimalOfText, multiplyDecimals } from '../src/core/decimal.js';
import { decide } from '../src/core/gate.js';
import { normalizeText, tokenize } from '../src/core/match.js';
import { valueProvenance } from '../src/core/provenance.js';
import type { ValueProvenance } from '../src/core/types.js';
import { RESOURCE_ARGUMENT, actionValues, argumentValues, findProduct, markedProducts, prepareText, suppliersOf, supplies } from '../src/core/values.js';
import { argsHashOf } from '../src/index.js';

const AMOUNT = { amount: 'amount' } as const;
const id = (value: string) => ({ argument: 'to', value, type: 'identifier' as const, amount: null });
const amt = (v: string | number) => argumentValues({ amount: v }, AMOUNT)[0] as ReturnType<typeof argumentValues>[number];
const sup = (text: string, v: ReturnType<typeof id>) => supplies(prepareText(text), v);

describe('identifiers are exact strings', () => {
  test('look-alike, leading-zero, long-digit and digit-grouped variants are not supplied', () => {
    const text = 'Pay account 6228480012345678901, IBAN DE89370400440532013000, phone +1 555 0100, ref 901, total 1,234,567.';
    assert.equal(sup(text, id('6228480012345678901')), true);
    for (const v of ['6228480012345678777', '6228480012345678900', '06228480012345678901', '0901', '00901', '1234567', '1234567.0', 'de8937040044053201300', '5550100']) {
      assert.equal(sup(text, id(v)), false, `${v} must not be supplied`);
    }
    assert.equal(sup(text, id('1,234,567')), true, 'the exact grouped text is the same string');
    assert.equal(sup('ref 901', id('0901')), false);
    assert.equal(sup('ref 0901', id('901')), false);
    assert.equal(sup('total 1,234,567', id('234,567')), false, 'no part of a grouped run');
  });

  test('a JSON number that is no declared amount is its decimal text, an identifier', () => {
    const [v] = argumentValues({ to: 5000 });
    assert.deepEqual(v, { argument: 'to', value: '5000', type: 'identifier', amount: null });
    assert.equal(supplies(prepareText('$5,000.00'), v as ReturnType<typeof id>), false);
    assert.equal(supplies(prepareText('amount 5000'), v as ReturnType<typeof id>), true);
  });

  test('normalisation: NFC, case, white space; nothing else (`_` is part of an identifier)', () => {
    assert.equal(normalizeText('  ACCT_12\u00a0\n 34 '), 'acct_12 34');
    assert.equal(sup('pay CAFE\u0301-1', id('café-1')), true, 'NFC');
    assert.equal(sup('pay ACCT  1234', id('acct 1234')), true);
    assert.equal(sup('pay ACCT  1234', id('acct_1234')), false, 'only keys of letter words may be written with spaces');
    assert.equal(sup('pay ACCT_1234', id('acct 1234')), false, 'not the other way round: `_` joins a run of the text');
    assert.equal(sup('pay ＡＣＣＴ-1', id('ACCT-1')), false, 'no compatibility folding');
    assert.equal(sup('pay (555) 123-4567 now', id('(555) 123-4567')), true, 'separators inside a value match exactly');
    assert.equal(sup('pay (555) 123-4567 now', id('555) 123-4567')), true);
    assert.equal(sup('pay (555) 123-45678', id('(555) 123-4567')), false);
    assert.equal(sup('pay acct-1.', id('acct-1.')), true);
    assert.equal(sup('pay acct-1.5', id('acct-1.')), false);
    assert.equal(sup('a $ b', id('$')), false, 'a value with no identifier run is supplied by nothing');
  });

  test('tokens: runs continue over `.`/`,` before an identifier character', () => {
    const out: string[] = [];
    tokenize(normalizeText('billing@acme.co.uk, 5,000.00. (x)'), (t) => out.push(t));
    assert.deepEqual(out, ['billing@acme.co.uk', ',', ' ', '5,000.00', '.', ' ', '(', 'x', ')']);
  });
});

describe('amounts are exact decimals', () => {
  test('canonical decimals', () => {
    assert.equal(decimalOfText('5,000.00'), '5000');
    assert.equal(decimalOfText('0.50'), '0.5');
    for (const bad of ['12,50', '1,2,0,0', '0500', '-5', '5e3', '1,0000', '']) assert.equal(decimalOfText(bad), null, bad);
    assert.equal(decimalOfArgument('$5,000'), '5000');
    assert.equal(decimalOfArgument(5e3), '5000');
    assert.equal(decimalOfArgument(1e21), '1000000000000000000000');
    assert.equal(decimalOfArgument(1.5e-7), '0.00000015');
    assert.equal(decimalOfArgument(-1200), null);
    assert.equal(decimalOfArgument('-1200'), null);
    assert.equal(multiplyDecimals('3', '19.99'), '59.97');
    assert.equal(multiplyDecimals('123456789012345678901', '10.5'), '1296296284629629628460.5');
  });

  test('5000 = 5,000.00 = $5,000; no precision is lost at any magnitude', () => {
    for (const v of [5000, '5000', '5,000', '$5,000', '5000.00']) assert.equal(supplies(prepareText('the invoice: $5,000.00 due'), amt(v)), true, String(v));
    for (const v of [5000.01, '5001', 500, '50,00', -5000]) assert.equal(supplies(prepareText('the invoice: $5,000.00 due'), amt(v)), false, String(v));
    const long = 'total 6228480012345678901.25';
    assert.equal(supplies(prepareText(long), amt('6228480012345678901.25')), true);
    assert.equal(supplies(prepareText(long), amt('6228480012345678901.26')), false);
    assert.equal(supplies(prepareText('balance 9007199254740993'), amt('9007199254740992')), false, 'beyond 2^53');
    assert.equal(supplies(prepareText('version 1.5'), amt('5')), false);
    assert.equal(supplies(prepareText('pay .5 now'), amt('5')), false, '.5 is no 5');
    assert.equal(supplies(prepareText('INV-1200, 2026-11-29'), amt(1200)), false, 'digits inside identifiers are no amounts');
  });

  test('only declared arguments are amounts; keys are identifiers', () => {
    const vs = argumentValues({ amount: [5, { x: '7' }], total: 5, 'ACCT-9': 1 }, AMOUNT);
    assert.deepEqual(
      vs.map((v) => [v.argument, v.type, v.amount]),
      [
        ['amount[0]', 'amount', '5'],
        ['amount[1].x', 'amount', '7'],
        ['total', 'identifier', null],
        ['ACCT-9{key}', 'identifier', null],
        ['ACCT-9', 'identifier', null],
      ],
    );
  });
});

describe('the resource is a value', () => {
  test('actionValues adds it as an identifier at {resource}', () => {
    const vs = actionValues({ args: { to: 'a' }, resource: 's3://attacker-bucket' });
    assert.deepEqual(vs.at(-1), { argument: RESOURCE_ARGUMENT, value: 's3://attacker-bucket', type: 'identifier', amount: null });
    const p = valueProvenance({ args: {}, resource: 'prod/attacker-image' }, {}, [{ id: 'm1', text: prepareText('deploy prod/attacker-image now') }], prepareText('deploy prod/web'));
    assert.deepEqual(p, [{ argument: '{resource}', value: 'prod/attacker-image', recordIds: ['m1'], userTurn: false, computed: null }]);
  });
});

describe('computed amounts: only a marked quantity × unit price', () => {
  test('the grammar', () => {
    const pairs = (s: string) => markedProducts(prepareText(s)).map((p) => `${p.quantity}*${p.unitPrice}`);
    assert.deepEqual(pairs('reorder 50 units at $10 each.'), ['50*10']);
    assert.deepEqual(pairs('3 x $19.99'), ['3*19.99']);
    assert.deepEqual(pairs('10 licences @ 25 per licence'), ['10*25']);
    assert.deepEqual(pairs('2 boxes of paper at €3.50 apiece'), ['2*3.5']);
    for (const s of ['Pay $1,200 (PO 4417) to ACCT-1234', 'pay 1200 for PO 4417', 'order 50 units at $10', '50 units cost $10 each', 'year 2024, invoice 77', '3x4 boards'])
      assert.deepEqual(pairs(s), [], s);
  });

  test('amplification: 1,200 × 4,417 from "Pay $1,200 (PO 4417)" is no product', () => {
    const turn = prepareText('Pay Acme $1,200 (PO 4417) to ACCT-1234');
    assert.equal(findProduct('5300400', turn), null);
    const [v] = valueProvenance({ args: { to: 'ACCT-1234', amount: 5300400 } }, AMOUNT, [], turn).filter((x) => x.argument === 'amount');
    assert.deepEqual(v, { argument: 'amount', value: '5300400', recordIds: [], userTurn: false, amount: '5300400', computed: null });
    const ok = valueProvenance({ args: { amount: 59.97 } }, AMOUNT, [], prepareText('buy 3 x $19.99'));
    assert.deepEqual(ok[0]?.computed, {
      op: '*',
      operands: [
        { value: '3', recordIds: [], userTurn: true },
        { value: '19.99', recordIds: [], userTurn: true },
      ],
    });
  });

  test('the gate checks the product in exact decimals', () => {
    const action = { type: 'pay', args: { amount: 59.97 } };
    const base = {
      action,
      argsHash: argsHashOf(action.args),
      tier: 'high' as const,
      mode: 'enforce' as const,
      now: '2025-01-01T00:00:00.000Z',
      dependencies: [],
      confirmations: [],
      citedConfirmationId: null,
      threshold: 'trusted_tool_verified' as const,
    };
    const v = (amount: string, a: string, b: string): ValueProvenance => ({
      argument: 'amount',
      value: amount,
      recordIds: [],
      userTurn: false,
      amount,
      computed: {
        op: '*',
        operands: [
          { value: a, recordIds: [], userTurn: true },
          { value: b, recordIds: [], userTurn: true },
        ],
      },
    });
    assert.equal(decide({ ...base, values: [v('59.97', '3', '19.99')] }).outcome, 'allow');
    assert.equal(decide({ ...base, values: [v('59.970000001', '3', '19.99')] }).outcome, 'deny');
    assert.equal(decide({ ...base, values: [v('9007199254740993', '9007199254740993', '1')] }).outcome, 'allow');
    assert.equal(decide({ ...base, values: [v('9007199254740992', '9007199254740993', '1')] }).outcome, 'deny', 'a double would round both to 2^53');
  });
});

describe('linear-time matching', () => {
  test('a 1,000,000-character record and 200 values: steps linear in text + values, not text × values', () => {
    const record = prepareText('acct-1 '.repeat(142858).slice(0, 1_000_000));
    const values = Array.from({ length: 200 }, (_, i) => id(`${'acct-1 '.repeat(1 + (i % 5))}acct-${i + 2}`));
    const t0 = performance.now();
    const { byValue, ops } = suppliersOf(values, [record]);
    const ms = performance.now() - t0;
    assert.ok(byValue.every((x) => x.length === 0));
    const tokens = record.tokens.length;
    assert.ok(ops <= 3 * tokens + 10_000, `ops ${ops} for ${tokens} tokens`);
    // eslint-disable-next-line no-console -- reported, not asserted
    console.log(`# 1,000,000-character record x 200 values: ${ms.toFixed(1)} ms, ${ops} steps for ${tokens} tokens`);
  });

  test('each (value, text) pair is reported once, however many occurrences', () => {
    const record = prepareText('a a a a a a a a a a b');
    const values = [id('a'), id('a a'), id('a a a'), id('a b'), id('b'), id('c')];
    assert.deepEqual(suppliersOf(values, [record, prepareText('c')]).byValue, [[0], [0], [0], [0], [0], [1]]);
  });
});

describe('properties', () => {
  const runChar = fc.constantFrom('a', 'b', '1', '0', '-', '@', 'é', '9');
  const sepChar = fc.constantFrom(' ', '.', ',', '(', ')', '$', '!');
  const textArb = fc.array(fc.oneof(runChar, sepChar), { maxLength: 40 }).map((cs) => cs.join(''));
  const toks = (s: string): string[] => {
    const out: string[] = [];
    tokenize(normalizeText(s), (t) => out.push(t));
    return out;
  };
  const containsSeq = (hay: string[], needle: string[]): boolean => needle.length > 0 && hay.some((_, i) => needle.every((t, j) => hay[i + j] === t));

  test('identifier matching is exact-string equality on token boundaries', () => {
    fc.assert(
      fc.property(textArb, textArb, (text, value) => {
        const vt = toks(value);
        const hasRun = vt.some((t) => /[\p{L}\p{N}\-@/+#]/u.test(t[0] as string));
        const expected = hasRun && containsSeq(toks(text), vt);
        assert.equal(sup(text, id(value)), expected);
        if (expected) assert.ok(normalizeText(text).includes(normalizeText(value)), 'a match is a substring of the normalised text');
      }),
      { numRuns: 3000 },
    );
  });

  test('a value taken from a text at token boundaries is supplied by it', () => {
    fc.assert(
      fc.property(textArb, fc.nat(), fc.nat(), (text, i, n) => {
        const t = toks(text);
        if (t.length === 0) return;
        const start = i % t.length;
        const slice = t.slice(start, start + 1 + (n % 4));
        if (!slice.some((x) => /[\p{L}\p{N}\-@/+#]/u.test(x[0] as string))) return;
        assert.equal(sup(text, id(slice.join(''))), true);
      }),
      { numRuns: 2000 },
    );
  });

  test('amount matching equals exact decimal equality', () => {
    const dec = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.nat({ max: 6 })).map(([n, s]) => {
      const d = n.toString().padStart(s + 1, '0');
      return s === 0 ? d : `${d.slice(0, d.length - s)}.${d.slice(d.length - s)}`;
    });
    const group = (d: string): string => {
      const [int, frac] = d.split('.') as [string, string | undefined];
      const g = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
      return frac === undefined ? g : `${g}.${frac}`;
    };
    fc.assert(
      fc.property(dec, dec, fc.boolean(), fc.boolean(), (a, b, ga, gb) => {
        const text = `total $${ga ? group(a) : a} due`;
        const arg = gb ? `$${group(b)}` : b;
        assert.equal(supplies(prepareText(text), amt(arg)), decimalOfArgument(a) === decimalOfArgument(b));
      }),
      { numRuns: 3000 },
    );
  });
});
