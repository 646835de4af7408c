/**
 * Party slots and party naming (src/core/party-slots.ts, src/core/party-naming.ts): where a plain
 * request names the party of its action, and which trusted claims that names — a table of turns,
 * and properties over generated turns (a claim the turn does not write is never named; naming a
 * second party anywhere names none).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { namedByTurn } from '../src/core/party-naming.js';
import { nameEnds, partySlots, sameParty, slotWords } from '../src/core/party-slots.js';
import type { Claim } from '../src/core/types.js';

const CLAIMS: Claim[] = [
  { subject: 'Acme', field: 'payee_account', value: 'ACME-AP' },
  { subject: 'Acme', field: 'amount_due', value: '1200' },
  { subject: 'Acme Holdings Ltd', field: 'payee_account', value: 'HOLD-AP' },
  { subject: 'Acme March invoice', field: 'amount_due', value: '1500' },
  { subject: 'Globex', field: 'payee_account', value: 'GLOBEX-AP' },
  { subject: 'Globex', field: 'amount_due', value: '1200' },
  { subject: 'Harbor Street', field: 'payee_account', value: 'HARBOR-RENT' },
  { subject: 'Bob', field: 'email_address', value: 'bob@corp.example' },
  { subject: 'Carol', field: 'email_address', value: 'carol@corp.example' },
];

/** The subjects and values of the claims `turn` (opening with `phrase`) names, as `subject=value`, sorted (`places`: the action's place nouns; none for a payment). */
function named(turn: string, phrase: string, places: readonly string[] = []): string[] {
  return [...namedByTurn(CLAIMS, partySlots(turn, phrase, { places: new Set(places) }), places.length === 0)].map((c) => `${c.subject}=${String(c.value)}`).sort();
}

describe('party slots', () => {
  test('slots open after the intent phrase (not before for), after to, and after the for of a debt', () => {
    const kinds = (turn: string, phrase: string): string[] => {
      const p = partySlots(turn, phrase);
      return p.slots.map((s) => `${s.kind}:${p.words[s.start] ?? ''}`);
    };
    assert.deepEqual(kinds('Pay the Acme invoice to their account.', 'pay'), ['object:acme', 'to:account']);
    assert.deepEqual(kinds('Pay for Acme 1200.', 'pay'), []);
    assert.deepEqual(kinds("Pay this month's rent for the Harbor Street office.", 'pay'), ['object:rent', 'for:harbor']);
    assert.deepEqual(kinds('Buy a laptop for Bob.', 'buy'), ['object:laptop']);
    assert.equal(partySlots('Pay Acme 1200 to their account.', 'pay').slots[1]?.backReference, true);
    assert.equal(partySlots('Refund Acme 1200 to our account.', 'refund').slots[1]?.backReference, false);
  });
  test('a name ends before a function word, a number, a noun, a period or another name; after a determiner only before what is owed', () => {
    const ends = (turn: string, end: number, determined: boolean): boolean => nameEnds(slotWords(turn), end, determined, () => false);
    assert.equal(ends('acme', 1, false), true);
    assert.equal(ends('acme 1200', 1, false), true);
    assert.equal(ends('acme holdings', 1, false), false, 'a longer name');
    assert.equal(ends('acme invoice', 1, true), true);
    assert.equal(ends('acme march invoice', 1, true), true);
    assert.equal(ends('bob report', 1, true), false, 'a description');
    assert.equal(ends('bob report', 1, false), true, 'no determiner: "grant Bob access"');
    assert.equal(ends("acme's invoice", 1, false), true);
    assert.equal(ends("bob's report", 1, false), false);
    assert.equal(
      nameEnds(slotWords('acme globex'), 1, false, (at) => at === 1),
      true,
      'another claimed name follows',
    );
  });
  test('one party: equal names, or one followed only by periods and nouns', () => {
    assert.equal(sameParty(['acme'], ['acme', 'march', 'invoice']), true);
    assert.equal(sameParty(['acme'], ['acme', 'holdings']), false);
    assert.equal(sameParty(['acme'], ['globex']), false);
  });
});

describe('party naming', () => {
  test('a table of turns', () => {
    const cases: [string, string, string[], string[]?][] = [
      ['Pay the Acme invoice.', 'pay', ['Acme=1200', 'Acme=ACME-AP']],
      ['Pay Acme 1200.', 'pay', ['Acme=1200', 'Acme=ACME-AP']],
      ['Pay the Acme March invoice.', 'pay', ['Acme March invoice=1500', 'Acme=ACME-AP']],
      ['Pay the Acme Holdings invoice.', 'pay', []],
      ['Pay Acme Holdings Ltd.', 'pay', ['Acme Holdings Ltd=HOLD-AP']],
      ['Pay Acme for Globex.', 'pay', []],
      ['Pay the Globex invoice to Acme.', 'pay', []],
      ['Pay 1200 to Acme.', 'pay', ['Acme=1200', 'Acme=ACME-AP']],
      ['Pay Acme 1200 to their account.', 'pay', ['Acme=1200', 'Acme=ACME-AP']],
      ['Refund Acme 1200 to our account.', 'refund', []],
      ['Pay Acme 1200 to ACME-AP.', 'pay', ['Acme=1200', 'Acme=ACME-AP']],
      ["Pay this month's rent for the Harbor Street office.", 'pay', ['Harbor Street=HARBOR-RENT']],
      ['Email the Bob report.', 'email', []],
      ['Email the report to Bob.', 'email', ['Bob=bob@corp.example']],
      ["Email Bob's report to Carol.", 'email', []],
      ['Email the report to Bob and Carol.', 'email', []],
      ['Deploy the build to production.', 'deploy', [], ['production', 'staging']],
      ['Email the report to Finance.', 'email', [], ['report']],
      ['Pay the Acme invoice into our account.', 'pay', []],
      ['Pay the Acme invoice via Escrow.', 'pay', []],
    ];
    for (const [turn, phrase, want, values] of cases) assert.deepEqual(named(turn, phrase, values), want, turn);
  });
  test('property: a claim whose subject and value the turn does not write is never named; a second party written anywhere names none', () => {
    const parties = ['Acme', 'Globex', 'Bob', 'Carol'];
    const shapes = ['Pay {a} 1200.', 'Pay the {a} invoice.', 'Email the report to {a}.', 'Pay 1200 to {a}.', 'Pay the {a} invoice to their account.'];
    const tails = [' for {b}.', ' to {b}.', ', {b} too.', ' from {b}.', ' and {b}.'];
    let checked = 0;
    for (const shape of shapes)
      for (const a of parties) {
        const phrase = shape.startsWith('Email') ? 'email' : 'pay';
        const one = named(shape.replace('{a}', a), phrase);
        for (const n of one) assert.ok(n.startsWith(`${a}`), `${shape} ${a}: ${n}`);
        for (const b of parties) {
          if (b === a) continue;
          for (const tail of tails) {
            const turn = shape.replace('{a}', a).replace(/\.$/, '') + tail.replace('{b}', b);
            assert.deepEqual(named(turn, phrase), [], turn);
            checked++;
          }
        }
      }
    assert.equal(checked, shapes.length * parties.length * (parties.length - 1) * tails.length);
  });
});
