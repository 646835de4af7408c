/**
 * Independence domains compare in canonical form at decision time (docs/design.md § Corroboration:
 * distinct principal AND distinct domain): domains stored before host-name normalisation
 * (`ledger.acme.`, `Ledger.ACME`) are still one domain with `ledger.acme`. Pure core: the rows
 * an older memauth stored are given as they were.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type CorroborationFacts, evaluateCorroboration } from '../src/core/corroboration.js';

const cor = (id: string, principalId: string, domain: string, evidence: string): CorroborationFacts => ({
  id,
  tenant: 't',
  recordId: 'mem_x',
  principalId,
  authority: 'trusted_tool_verified',
  domain,
  evidenceRef: evidence,
  at: `2026-01-01T00:00:0${id.slice(-1)}.000Z`,
  evidenceUsable: true,
  evidenceDerivedFromRecord: false,
  evidenceInLineage: false,
  evidenceKey: `ref:${evidence}`,
});

describe('domains stored the old way compare as host names at decision time', () => {
  test('two corroborators in `ledger.acme` and `ledger.acme.` are one vote', () => {
    const r = evaluateCorroboration({
      lowestAuthority: 'external_untrusted',
      lineage: { principals: new Set(['mallory']), domains: new Set(['mallory.example']) },
      corroborations: [cor('c1', 'ledger-a', 'ledger.acme', 'registry:1'), cor('c2', 'ledger-b', 'ledger.acme.', 'registry:2')],
      k: 2,
      minAuthority: 'trusted_tool_verified',
    });
    assert.equal(r.independentDomains, 1);
    assert.equal(r.actionAuthority, 'external_untrusted');
  });

  test("a corroborator in the writer's domain spelled with a trailing dot or IDNA form is the writer's domain", () => {
    for (const [writer, corroborator] of [
      ['ledger.acme.', 'ledger.acme'],
      ['ledger.acme', 'ledger.acme.'],
      ['xn--bcher-kva.example', 'bücher.example'],
      ['bücher.example.', 'xn--bcher-kva.example'],
    ]) {
      const r = evaluateCorroboration({
        lowestAuthority: 'external_untrusted',
        lineage: { principals: new Set(['w']), domains: new Set([writer as string]) },
        corroborations: [cor('c1', 'v', corroborator as string, 'registry:1')],
        k: 1,
        minAuthority: 'trusted_tool_verified',
      });
      assert.deepEqual(r.rejected, [{ id: 'c1', reason: 'writer_or_lineage_domain' }], `${writer} vs ${corroborator}`);
    }
  });

  test('non-host-name domains stay distinct: `bank/eu` and `bank/us` are two votes', () => {
    const r = evaluateCorroboration({
      lowestAuthority: 'external_untrusted',
      lineage: { principals: new Set(['mallory']), domains: new Set(['mallory.example']) },
      corroborations: [cor('c1', 'eu', 'bank/eu', 'registry:1'), cor('c2', 'us', 'bank/us', 'registry:2')],
      k: 2,
      minAuthority: 'trusted_tool_verified',
    });
    assert.equal(r.independentDomains, 2);
  });
});
