/**
 * Audit log, pure parts: golden fixture of the hashed format and the tenant-bound genesis.
 * Store-level audit cases (checkpoints, truncation, forged rows) are in test/conformance/audit.ts
 * and run on every driver.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import { type AuditEntry, canonicalJson, entryHash, genesisHash, verifyChain } from '../src/index.js';
import { nextEntry, payloadJson } from '../src/core/audit.js';
import fc from 'fast-check';

describe('golden fixture (audit format version 1)', () => {
  // Computed once and written here literally: a change to these strings is a format change.
  const GENESIS_ACME = '744f7d7a957e8862489fa325c93a77058c71ec0010285c63e75bb09577e03d37';
  const GENESIS_GLOBEX = '227325b5efba2899ba8618cc2d3ace4edbd6f677ef9a7d0bc8e27756472e2150';
  const ENTRY = {
    seq: 7,
    prevHash: GENESIS_ACME,
    op: 'write' as const,
    payload: {
      recordId: 'mem_00000000000000000000000000000001',
      scope: 'vendors',
      contentHash: 'a591a6d40bf420404a011733cfb7b190d62c65bf0bcda32b57b277d9ad9f146e',
      origin: { authority: 'external_untrusted', principalId: 'browser', sourceRef: 'https://acme.example/billing', writtenAt: '2025-01-01T00:00:00.000Z' },
      taint: { lowestAuthority: 'external_untrusted', channels: ['trusted_tool_echo'], sources: ['https://acme.example/billing'], oldestSourceAt: '2024-12-31T23:59:59.000Z' },
      derivedFrom: [],
      expiresAt: null,
      amount: 1.5,
      big: 1e21,
      text: 'Zürich € 😀 "quoted" \n',
      zeta: true,
    },
    policyVersion: '4e0c0dc47f3eba528d67db97e4b1122a578d186aa7d3bc60cca276cf1dbb6976',
  };
  const CANONICAL = String.raw`{"op":"write","payload":{"amount":1.5,"big":1e+21,"contentHash":"a591a6d40bf420404a011733cfb7b190d62c65bf0bcda32b57b277d9ad9f146e","derivedFrom":[],"expiresAt":null,"origin":{"authority":"external_untrusted","principalId":"browser","sourceRef":"https://acme.example/billing","writtenAt":"2025-01-01T00:00:00.000Z"},"recordId":"mem_00000000000000000000000000000001","scope":"vendors","taint":{"channels":["trusted_tool_echo"],"lowestAuthority":"external_untrusted","oldestSourceAt":"2024-12-31T23:59:59.000Z","sources":["https://acme.example/billing"]},"text":"Zürich € 😀 \"quoted\" \n","zeta":true},"policyVersion":"4e0c0dc47f3eba528d67db97e4b1122a578d186aa7d3bc60cca276cf1dbb6976","prevHash":"744f7d7a957e8862489fa325c93a77058c71ec0010285c63e75bb09577e03d37","seq":7}`;
  const HASH = '15186a24b602a81358c994ef3d25b0379e282b7546df57c0afe789bf705ee2ae';

  test('canonical JSON of the hashed fields is pinned', () => {
    const text = canonicalJson({ seq: ENTRY.seq, prevHash: ENTRY.prevHash, op: ENTRY.op, payload: ENTRY.payload, policyVersion: ENTRY.policyVersion });
    assert.equal(text, CANONICAL);
  });

  test('entryHash is SHA-256 of that canonical JSON, pinned', () => {
    assert.equal(entryHash(ENTRY), HASH);
    assert.equal(crypto.createHash('sha256').update(CANONICAL, 'utf8').digest('hex'), HASH);
    // key order of the input does not matter; extra fields (tenant, hash) are not hashed
    const shuffled = {
      policyVersion: ENTRY.policyVersion,
      payload: Object.fromEntries(Object.entries(ENTRY.payload).reverse()),
      op: ENTRY.op,
      prevHash: ENTRY.prevHash,
      seq: ENTRY.seq,
      tenant: 'other',
      hash: 'x',
    };
    assert.equal(entryHash(shuffled), HASH);
  });

  test('every hashed field changes the hash', () => {
    assert.notEqual(entryHash({ ...ENTRY, seq: 8 }), HASH);
    assert.notEqual(entryHash({ ...ENTRY, prevHash: GENESIS_GLOBEX }), HASH);
    assert.notEqual(entryHash({ ...ENTRY, op: 'derive' }), HASH);
    assert.notEqual(entryHash({ ...ENTRY, payload: { ...ENTRY.payload, amount: 1.25 } }), HASH);
    assert.notEqual(entryHash({ ...ENTRY, policyVersion: '0'.repeat(64) }), HASH);
  });

  test('genesis hash is pinned and tenant-bound', () => {
    assert.equal(genesisHash('acme'), GENESIS_ACME);
    assert.equal(genesisHash('globex'), GENESIS_GLOBEX);
    assert.notEqual(genesisHash('acme'), genesisHash('Acme'));
  });
});

describe('genesis is tenant-bound', () => {
  test('a valid chain moved to another tenant does not verify', () => {
    const entries: AuditEntry[] = [];
    let head: { seq: number; hash: string } | null = null;
    for (const op of ['policy', 'principal', 'write'] as const) {
      const e: AuditEntry = nextEntry('acme', head, op, { n: entries.length }, '0'.repeat(64));
      entries.push(e);
      head = { seq: e.seq, hash: e.hash };
    }
    assert.equal(verifyChain('acme', entries).ok, true);
    const moved: AuditEntry[] = entries.map((e) => ({ ...e, tenant: 'globex' }));
    const v = verifyChain('globex', moved);
    assert.equal(v.ok, false);
    assert.equal(v.firstBadSeq, 1);
    assert.equal(v.problem, 'prev_hash_mismatch');
    // unchanged tenant field but verified as another tenant
    const v2 = verifyChain('globex', entries);
    assert.equal(v2.ok, false);
    assert.equal(v2.firstBadSeq, 1);
  });
});

test('an entry hashes and stores exactly the JSON text of its payload, whatever the payload holds', () => {
  // nextEntry hashes plain JSON data as it is and everything else after a JSON round trip; both
  // must give the hash of the parsed stored text, and the stored text must parse to what
  // JSON.stringify's text parses to (plain payloads are stored as their canonical JSON)
  const head = { seq: 4, hash: 'a'.repeat(64) };
  const str = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 8 }).map((a) => String.fromCharCode(...a));
  const odd = fc.oneof(
    fc.constant(undefined),
    fc.constant(-0),
    fc.constant(Number.NaN),
    fc.constant(new Date(0)),
    fc.constant(new String('boxed')),
    fc.constant([1, , 3]),
    fc.constant({ toJSON: () => 'x' }),
  );
  const value = fc.letrec((tie) => ({
    v: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 2 }), odd, str, fc.double(), fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(str, tie('v'), { maxKeys: 4 })),
  })).v;
  fc.assert(
    fc.property(fc.dictionary(str, value, { maxKeys: 6 }), (payload) => {
      const text = JSON.stringify(payload);
      const e = nextEntry('acme', head, 'write', payload, 'v1');
      assert.deepEqual(JSON.parse(payloadJson(e)), JSON.parse(text));
      assert.equal(canonicalJson(JSON.parse(payloadJson(e))), canonicalJson(JSON.parse(text)));
      assert.equal(e.hash, entryHash({ seq: 5, prevHash: head.hash, op: 'write', payload: JSON.parse(text) as Record<string, unknown>, policyVersion: 'v1' }));
      assert.equal(canonicalJson(e.payload), canonicalJson(JSON.parse(text)));
    }),
    { numRuns: 3000 },
  );
  // an accessor is read once for the text and may answer differently next time: what is stored
  // is the text that was hashed (the drivers store payloadJson, never the live object)
  let n = 0;
  const tricky = {
    get v() {
      n += 1;
      return n;
    },
  };
  const e = nextEntry('acme', head, 'write', { tricky }, 'v1');
  assert.equal(payloadJson(e), '{"tricky":{"v":1}}');
  assert.equal(e.hash, entryHash({ seq: 5, prevHash: head.hash, op: 'write', payload: JSON.parse(payloadJson(e)) as Record<string, unknown>, policyVersion: 'v1' }));
});
