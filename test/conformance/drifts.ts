/**
 * Where the two drivers once wrote the same statement differently (before src/store/sql/ wrote
 * each one once), pinned at the port: each case failed on the driver that had drifted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MemoryRecord } from '../../src/index.js';
import { P, T, manualClock } from '../helpers.js';
import { type StoreFactory, scalar, setupWith } from './common.js';

/** The drift cases, against the factory's store. */
export function drifts(f: StoreFactory): void {
  describe('one statement, one behaviour', () => {
    test('erasing an already erased record changes nothing (SQLite refused it with IMMUTABLE_FIELD)', async (t) => {
      const clock = manualClock('2025-03-01T00:00:00.000Z');
      const env = await setupWith(f, { clock: clock.now });
      t.after(env.dispose);
      const { mem, raw } = env;
      const rec = (await mem.write({ tenant: T, scope: 'n', principal: P.alice, content: 'to erase twice' })).record;
      await mem.delete({ tenant: T, id: rec.id });
      const first = await scalar(raw, 'SELECT deleted_at FROM records WHERE id = ?', [rec.id]);
      assert.equal(typeof first, 'string');
      await mem.driver.transaction(T, (tx) => tx.eraseRecord(T, rec.id, '2025-04-01T00:00:00.000Z'));
      assert.equal(await scalar(raw, 'SELECT deleted_at FROM records WHERE id = ?', [rec.id]), first, 'the first deletion time stays');
      const [after] = await mem.driver.getRecords(T, [rec.id]);
      assert.equal(after?.status, 'deleted');
      assert.equal(after?.content, null);
    });

    test('corroborationsFor orders by time then id however many ids are asked (SQLite ordered each chunk of 500 alone)', async (t) => {
      const clock = manualClock('2025-03-01T00:00:00.000Z');
      const env = await setupWith(f, { clock: clock.now });
      t.after(env.dispose);
      const { mem } = env;
      const a = (await mem.write({ tenant: T, scope: 'n', principal: P.browser, content: 'vendor A pays ACCT-1' })).record;
      const b = (await mem.write({ tenant: T, scope: 'n', principal: P.browser, content: 'vendor B pays ACCT-2' })).record;
      clock.advance(1000);
      await mem.corroborate({ tenant: T, recordId: a.id, principal: P.bank, evidence: 'bankapi:acct/1' });
      clock.advance(1000);
      await mem.corroborate({ tenant: T, recordId: b.id, principal: P.bank, evidence: 'bankapi:acct/2' });
      // b's id in the first 500, a's after them
      const filler = Array.from({ length: 520 }, (_, i) => `mem_none_${i}`);
      const ids = [b.id, ...filler, a.id];
      const got = (await mem.driver.corroborationsFor(T, ids)).map((c) => c.recordId);
      assert.deepEqual(got, [a.id, b.id]);
      await mem.driver.transaction(T, async (tx) => {
        assert.deepEqual(
          (await tx.corroborationsFor(T, ids)).map((c) => c.recordId),
          [a.id, b.id],
          'inside a transaction too',
        );
      });
    });

    test('listRecordsAfter pages every record by id, deleted ones included (PostgreSQL lacked it)', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await mem.write({ tenant: T, scope: `s${i % 2}`, principal: P.alice, content: `page ${i}` })).record.id);
      await mem.delete({ tenant: T, id: ids[2] as string });
      await mem.registerPrincipal({ tenant: 'globex', id: 'bob', kind: 'user', domain: 'bob' });
      await mem.write({ tenant: 'globex', scope: 's0', principal: 'bob', content: 'not of this tenant' });
      const after = mem.driver.listRecordsAfter;
      assert.equal(typeof after, 'function');
      const seen: string[] = [];
      let last: string | null = null;
      for (;;) {
        const page: MemoryRecord[] | undefined = await mem.driver.listRecordsAfter?.(T, last, 2);
        if (!page || page.length === 0) break;
        seen.push(...page.map((r) => r.id));
        last = page[page.length - 1]?.id ?? null;
      }
      assert.deepEqual(seen, [...ids].sort());
    });

    test('search with a limit below 1 finds nothing (PostgreSQL failed on a negative LIMIT)', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      await mem.write({ tenant: T, scope: 'n', principal: P.alice, content: 'Heron notes' });
      const now = new Date().toISOString();
      assert.deepEqual(await mem.driver.search(T, 'n', 'heron', 0, now), []);
      assert.deepEqual(await mem.driver.search(T, 'n', 'heron', -1, now), []);
      assert.equal((await mem.driver.search(T, 'n', 'heron', 1, now)).length, 1);
    });

    test('a record with more derivation edges than one statement can bind is stored whole (an agent write in a session of 14,000 reads)', async (t) => {
      // before src/store/sql/: SQLite inserted one edge per statement, PostgreSQL one unnest() array;
      // a single multi-row INSERT of 5 values per edge exceeds SQLite's 32,766 and PostgreSQL's 65,535 bound values
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      const at = '2025-01-01T00:00:00.000Z';
      const rec = (id: string, derivedFrom: MemoryRecord['derivedFrom']): MemoryRecord => ({
        formatVersion: 1,
        id,
        tenant: T,
        scope: 'n',
        content: id,
        contentHash: 'h',
        createdAt: at,
        expiresAt: null,
        origin: { authority: 'model_inferred', principalId: P.alice, sourceRef: `principal:${P.alice}`, writtenAt: at },
        derivedFrom,
        taint: { lowestAuthority: 'model_inferred', channels: [], sources: [], oldestSourceAt: at },
        audit: { policyVersion: 'v', writeReason: 'w', seq: 1 },
        status: 'active',
      });
      const edges = Array.from({ length: 14_000 }, () => ({ from: 'mem_edges_root', transform: 'rewrite' as const, kind: 'session' as const }));
      await mem.driver.transaction(T, async (tx) => {
        await tx.insertRecord(rec('mem_edges_root', []));
        await tx.insertRecord(rec('mem_edges_many', edges));
      });
      const [got] = await mem.driver.getRecords(T, ['mem_edges_many']);
      assert.equal(got?.derivedFrom.length, 14_000);
    });

    test('a session or session read missing a required column is refused, not silently dropped (SQLite ignored it)', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem, raw } = env;
      const none = null as unknown as string;
      await assert.rejects(mem.driver.transaction(T, (tx) => tx.ensureSession(T, 's1', none)));
      const entry = (ord: number, recordId: string) => ({ ord, recordId, hash: `h${ord}`, summary: { lowestAuthority: 'model_inferred' as const, channels: [], sources: [], oldestSourceAt: none } });
      await assert.rejects(mem.driver.transaction(T, (tx) => tx.appendSessionLog(T, 's1', [entry(1, 'mem_x')], none)));
      assert.equal(Number(await scalar(raw, 'SELECT count(*) FROM sessions')), 0);
      assert.equal(Number(await scalar(raw, 'SELECT count(*) FROM session_log')), 0);
      // a second insert of the same session is still a no-op that keeps the first; the log keeps the read order
      await mem.driver.transaction(T, async (tx) => {
        assert.equal(await tx.ensureSession(T, 's1', '2025-01-01T00:00:00.000Z', P.alice), P.alice);
        assert.equal(await tx.ensureSession(T, 's1', '2025-01-02T00:00:00.000Z', P.bank), P.alice);
        await tx.appendSessionLog(T, 's1', [entry(1, 'mem_b'), entry(2, 'mem_a')], '2025-01-01T00:00:00.000Z');
        await tx.appendSessionLog(T, 's1', [entry(3, 'mem_c')], '2025-01-03T00:00:00.000Z');
        assert.deepEqual(await tx.sessionReads(T, 's1'), ['mem_b', 'mem_a', 'mem_c'], 'in the order read');
      });
      // an ordinal or record already in the log is refused (the log is append-only)
      await assert.rejects(mem.driver.transaction(T, (tx) => tx.appendSessionLog(T, 's1', [entry(3, 'mem_d')], '2025-01-04T00:00:00.000Z')));
      await assert.rejects(mem.driver.transaction(T, (tx) => tx.appendSessionLog(T, 's1', [entry(4, 'mem_a')], '2025-01-04T00:00:00.000Z')));
    });
  });
}
