/**
 * The database's triggers are the last line of defence (docs/design.md § Memory record): no code
 * path, migration or script can UPDATE a record's origin/derivation/taint, rewrite its content,
 * or UPDATE/DELETE audit rows, derivations, corroborations, confirmations or decisions — nor
 * rewrite them with the driver's upsert (`INSERT OR REPLACE`, `INSERT … ON CONFLICT DO UPDATE`).
 * Each statement here goes straight to the raw handle under the API.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TokenService } from '../../src/server/tokens.js';
import { P, T } from '../helpers.js';
import { type Env, PROTECTED_TABLES, type Raw, type StoreFactory, expectImmutable, scalar, setupWith, snapshotAll } from './common.js';

interface Column {
  name: string;
  type: string;
}

/** A value of the column's type that differs from `current`. */
function otherValue(col: Column, current: unknown): unknown {
  if (col.type === 'INTEGER') return Number(current ?? 0) + 1;
  return current === 'tampered' ? 'tampered-2' : 'tampered';
}

/** The trigger cases, against the factory's store. */
export function triggers(f: StoreFactory): void {
  let env: Env;
  let raw: Raw;
  const ids = { page: '', rule: '', derived: '', gone: '', conf: '', dec: '' };

  before(async () => {
    env = await setupWith(f);
    raw = env.raw;
    const { mem } = env;
    const page = (
      await mem.write({ tenant: T, scope: 'vendors', principal: P.browser, content: 'Vendor page: remit to ACCT-77', source: 'https://vendor.example/remit', expiresAt: '2999-01-01T00:00:00.000Z' })
    ).record;
    const rule = (await mem.write({ tenant: T, scope: 'vendors', principal: P.alice, content: 'Only pay vendors on the approved list' })).record;
    const derived = await mem.derive({ tenant: T, principal: P.pipeline, from: [page.id, rule.id], content: 'Vendor remits to ACCT-77 (unapproved)', transform: 'merge' });
    const gone = (await mem.write({ tenant: T, scope: 'vendors', principal: P.alice, content: 'temporary note to delete' })).record;
    await mem.delete({ tenant: T, id: gone.id });
    await mem.corroborate({ tenant: T, recordId: page.id, principal: P.bank, evidence: 'bankapi:acct/77' });
    const conf = await mem.confirm({ tenant: T, principal: P.alice, action: { type: 'pay', args: { to: 'ACCT-77', amount: 5 } } });
    await mem.get({ tenant: T, id: page.id, session: 'ses-trig' });
    const dec = await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: 'ACCT-77', amount: 5 } }, session: 'ses-trig', dependsOn: [page.id], confirmationId: conf.id });
    assert.equal(dec.outcome, 'allow', JSON.stringify(dec.reasons));
    await mem.checkpoint({ tenant: T });
    await mem.driver.insertReviewNote({ id: 'rev_trig1', tenant: T, decisionId: dec.id, verdict: 'rejected', by: P.alice, note: 'not this vendor', at: '2025-01-01T00:00:00.000Z' });
    // a read as an older store kept it (reads now go to the session log)
    await raw.query('INSERT INTO session_reads (tenant, session_id, record_id, first_read_at) VALUES (?, ?, ?, ?)', [T, 'ses-older', page.id, '2025-01-01T00:00:00.000Z']);
    Object.assign(ids, { page: page.id, rule: rule.id, derived: derived.id, gone: gone.id, conf: conf.id, dec: dec.id });
    for (const t of PROTECTED_TABLES) assert.ok(Number(await scalar(raw, `SELECT count(*) AS n FROM ${t}`)) > 0, `fixture has rows in ${t}`);
  });

  after(async () => {
    await env.dispose();
  });

  describe('records', () => {
    const PROVENANCE = [
      'id',
      'tenant',
      'scope',
      'content_hash',
      'created_at',
      'expires_at',
      'origin_authority',
      'origin_principal',
      'origin_source',
      'origin_written_at',
      'taint_lowest',
      'taint_channels',
      'taint_sources',
      'taint_oldest_source_at',
      'policy_version',
      'write_reason',
      'audit_seq',
    ];

    test('UPDATE of each origin / taint / provenance column is refused (IMMUTABLE_FIELD) and changes nothing', async () => {
      const before = await snapshotAll(raw);
      const cols = await raw.columns('records');
      for (const name of PROVENANCE) {
        const col = cols.find((c) => c.name === name);
        assert.ok(col, `records.${name} exists`);
        for (const id of [ids.page, ids.derived, ids.gone]) {
          const cur = await scalar(raw, `SELECT ${name} AS v FROM records WHERE id = ?`, [id]);
          await expectImmutable(() => raw.query(`UPDATE records SET ${name} = ? WHERE id = ?`, [otherValue(col, cur), id]), `UPDATE records.${name}`);
        }
      }
      // authority columns raised to the top of the lattice, the laundering that matters
      await expectImmutable(() => raw.query("UPDATE records SET taint_lowest = 'system_policy', origin_authority = 'system_policy' WHERE id = ?", [ids.page]), 'raise authority');
      await expectImmutable(() => raw.query("UPDATE records SET taint_channels = '[]', taint_sources = '[]'"), 'clear taint on all rows');
      // an UPSERT is an UPDATE too (the same statement on both drivers)
      const list = cols.map((c) => c.name).join(', ');
      await expectImmutable(
        () => raw.query(`INSERT INTO records (${list}) SELECT ${list} FROM records WHERE id = ? ON CONFLICT(id) DO UPDATE SET taint_lowest = 'system_policy'`, [ids.page]),
        'UPSERT taint_lowest',
      );
      await expectImmutable(
        () => raw.query(`INSERT INTO records (${list}) SELECT ${list} FROM records WHERE id = ? ON CONFLICT(id) DO UPDATE SET content = 'Vendor page: remit to ACCT-00 (verified)'`, [ids.page]),
        'UPSERT content',
      );
      assert.deepEqual(await snapshotAll(raw), before);
    });

    test('UPDATE of content to other text is refused, also on the erase columns out of order', async () => {
      const before = await snapshotAll(raw);
      await expectImmutable(() => raw.query("UPDATE records SET content = 'Vendor page: remit to ACCT-00 (verified)' WHERE id = ?", [ids.page]), 'rewrite content');
      await expectImmutable(() => raw.query("UPDATE records SET content = 'resurrected' WHERE id = ?", [ids.gone]), 'write content into an erased row');
      await expectImmutable(() => raw.query("UPDATE records SET content = 'resurrected', status = 'active', deleted_at = NULL WHERE id = ?", [ids.gone]), 'un-delete');
      await expectImmutable(() => raw.query("UPDATE records SET status = 'active' WHERE id = ?", [ids.gone]), 'status back to active');
      await expectImmutable(() => raw.query("UPDATE records SET deleted_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", [ids.gone]), 'move deleted_at');
      await expectImmutable(() => raw.query("UPDATE records SET status = 'deleted' WHERE id = ?", [ids.page]), 'status without erasing content');
      await expectImmutable(() => raw.query("UPDATE records SET content = 'x' || content"), 'bulk content rewrite');
      assert.deepEqual(await snapshotAll(raw), before);
    });

    test('DELETE of a record row is refused', async () => {
      const before = await snapshotAll(raw);
      for (const id of [ids.page, ids.derived, ids.gone]) await expectImmutable(() => raw.query('DELETE FROM records WHERE id = ?', [id]), 'DELETE records');
      await expectImmutable(() => raw.query('DELETE FROM records'), 'DELETE all records');
      assert.deepEqual(await snapshotAll(raw), before);
    });
  });

  describe('append-only tables', () => {
    for (const table of ['audit', 'derivations', 'corroborations', 'confirmations', 'confirmation_uses', 'decisions', 'policies', 'principals', 'checkpoints', 'session_log', 'review_notes']) {
      test(`${table}: UPDATE of every column and DELETE are refused (IMMUTABLE_FIELD); data unchanged`, async () => {
        const before = await snapshotAll(raw);
        const cols = await raw.columns(table);
        assert.ok(cols.length > 0);
        const rows = await raw.query(`SELECT ${raw.rowKey} AS rid, * FROM ${table} ORDER BY ${raw.rowKey}`);
        assert.ok(rows.length > 0, `${table} has rows`);
        for (const row of rows) {
          for (const col of cols) {
            await expectImmutable(() => raw.query(`UPDATE ${table} SET ${col.name} = ? WHERE ${raw.rowKey} = ?`, [otherValue(col, row[col.name]), row.rid]), `UPDATE ${table}.${col.name}`);
          }
          await expectImmutable(() => raw.query(`DELETE FROM ${table} WHERE ${raw.rowKey} = ?`, [row.rid]), `DELETE ${table}`);
        }
        await expectImmutable(() => raw.query(`DELETE FROM ${table}`), `DELETE all ${table}`);
        assert.deepEqual(await snapshotAll(raw), before);
      });
    }

    test('the triggers are all installed', async () => {
      const names = await raw.triggerNames();
      for (const t of ['records_provenance_immutable', 'records_session_context_immutable', 'records_erase_only', 'records_no_delete']) assert.ok(names.includes(t), t);
      // every protected table but records (whose triggers are named above) refuses UPDATE and DELETE
      for (const t of PROTECTED_TABLES.filter((x) => x !== 'records')) {
        assert.ok(names.includes(`${t}_no_update`), `${t}_no_update`);
        assert.ok(names.includes(`${t}_no_delete`), `${t}_no_delete`);
      }
    });

    test('after every refused statement the store still works and its audit verifies', async () => {
      const { mem } = env;
      const r = await mem.get({ tenant: T, id: ids.page });
      assert.equal(r.taint.lowestAuthority, 'external_untrusted');
      assert.equal(r.content, 'Vendor page: remit to ACCT-77');
      const report = await mem.verifyAudit({ tenant: T });
      assert.equal(report.ok, true, report.tenants.map((x) => x.message).join('; '));
    });
  });

  describe('tokens (HTTP API / MCP bearer tokens)', () => {
    test('concurrent first admin tokens from several stores on one database: exactly one is inserted', async (t) => {
      const e2 = await f.open();
      t.after(e2.dispose);
      const others = [await e2.reopen(), await e2.reopen(), await e2.reopen()];
      t.after(async () => {
        for (const m of others) await m.close();
      });
      const services = [e2.mem.driver, ...others.map((m) => m.driver)].map((d) => new TokenService(d));
      const made = await Promise.all(Array.from({ length: 8 }, (_, i) => (services[i % services.length] as TokenService).ensureAdmin()));
      assert.equal(made.filter((x) => x !== null).length, 1, JSON.stringify(made));
      assert.equal((await e2.mem.driver.listTokens(null)).length, 1);
      // once it is revoked, the next first admin token is inserted again
      const [only] = await e2.mem.driver.listTokens(null);
      assert.ok(only);
      await (services[0] as TokenService).revoke(only.id);
      assert.notEqual(await (services[1] as TokenService).ensureAdmin(), null);
      const report = await e2.mem.verifyAudit({});
      assert.equal(report.ok, true, report.tenants.map((x) => x.message).join('; '));
    });

    test('a token can be revoked once; nothing else about it can change, and it cannot be deleted', async (t) => {
      const e2 = await setupWith(f);
      t.after(e2.dispose);
      const d = e2.mem.driver;
      const ts = new TokenService(d);
      const issued = await ts.issue({ tenant: T, principal: P.alice });
      const row = await d.findToken({ id: issued.info.id });
      assert.ok(row);
      await expectImmutable(() => e2.raw.query('UPDATE tokens SET hash = ? WHERE id = ?', ['b'.repeat(64), row.id]), 'change a token hash');
      await expectImmutable(
        () => e2.raw.query("UPDATE tokens SET tenant = NULL, principal_id = NULL, revoked_at = '2025-01-02T00:00:00.000Z' WHERE id = ?", [row.id]),
        'turn a principal token into an admin token',
      );
      await expectImmutable(() => e2.raw.query('DELETE FROM tokens WHERE id = ?', [row.id]), 'delete a token');
      await expectImmutable(
        () =>
          e2.raw.query(e2.raw.replaceSql('tokens', ['id', 'tenant', 'principal_id', 'hash', 'created_at', 'revoked_at'], 'VALUES (?, NULL, NULL, ?, ?, NULL)'), [
            row.id,
            'c'.repeat(64),
            row.createdAt,
          ]),
        'upsert a token',
      );
      const revoked = await ts.revoke(row.id);
      await assert.rejects(ts.revoke(row.id), (e: Error & { code?: string }) => e.code === 'TOKEN_REVOKED', 'a second revocation is refused');
      await expectImmutable(() => e2.raw.query('UPDATE tokens SET revoked_at = NULL WHERE id = ?', [row.id]), 'un-revoke');
      const found = await d.findToken({ hash: row.hash });
      assert.equal(found?.revokedAt, revoked.revokedAt);
      // a rotation: the old row revoked and the new one inserted, together
      const next = await ts.issue({ tenant: T, principal: P.alice });
      const rotated = await ts.rotate(next.info.id);
      assert.deepEqual(
        new Map((await d.listTokens(T)).map((x) => [x.id, x.revokedAt !== null])),
        new Map([
          [row.id, true],
          [next.info.id, true],
          [rotated.info.id, false],
        ]),
      );
      const report = await e2.mem.verifyAudit({ tenant: T });
      assert.equal(report.ok, true, report.tenants.map((x) => x.message).join('; '));
    });
  });

  describe("the driver's upsert (INSERT OR REPLACE / INSERT … ON CONFLICT DO UPDATE)", () => {
    // SQLite runs DELETE triggers for rows removed by REPLACE only when recursive_triggers is on;
    // without it `INSERT OR REPLACE` silently rewrites an "immutable" row. PostgreSQL's
    // ON CONFLICT DO UPDATE must fire the BEFORE UPDATE triggers.
    const cases: Array<{ table: string; where: () => [string, unknown[]]; set: Record<string, unknown> }> = [
      { table: 'records', where: () => ['id = ?', [ids.page]], set: { taint_lowest: 'system_policy', origin_authority: 'system_policy' } },
      { table: 'audit', where: () => ['tenant = ? AND seq = 1', [T]], set: { hash: '0'.repeat(64) } },
      { table: 'derivations', where: () => ['record_id = ? AND ord = 0', [ids.derived]], set: { from_id: 'mem_elsewhere' } },
      { table: 'corroborations', where: () => ['record_id = ?', [ids.page]], set: { authority: 'system_policy' } },
      { table: 'confirmations', where: () => ['id = ?', [ids.conf]], set: { max_uses: 1000 } },
      { table: 'decisions', where: () => ['id = ?', [ids.dec]], set: { outcome: 'deny' } },
    ];
    for (const c of cases) {
      test(`the upsert cannot rewrite a row of ${c.table}`, async () => {
        const before = await snapshotAll(raw);
        const cols = (await raw.columns(c.table)).map((x) => x.name);
        const [where, params] = c.where();
        const select = cols.map((n) => (n in c.set ? '? AS ' + n : n)).join(', ');
        const setParams = cols.filter((n) => n in c.set).map((n) => c.set[n]);
        const sql = raw.replaceSql(c.table, cols, `SELECT ${select} FROM ${c.table} WHERE ${where}`);
        let threw = false;
        try {
          await raw.query(sql, [...setParams, ...params]);
        } catch (e) {
          threw = true;
          assert.ok(e instanceof Error && e.message.includes('IMMUTABLE_FIELD'), `refused, but not by a memauth trigger: ${String(e)}`);
        }
        const afterSnap = await snapshotAll(raw);
        const changed = JSON.stringify(afterSnap[c.table]) !== JSON.stringify(before[c.table]);
        assert.ok(threw && !changed, `the upsert on ${c.table} was ${threw ? 'refused' : 'accepted'} and the table ${changed ? 'CHANGED' : 'did not change'}`);
      });
    }

    test('a used single-use confirmation cannot be revived by an upsert on confirmation_uses', async (t) => {
      const e2 = await setupWith(f);
      t.after(e2.dispose);
      const { mem } = e2;
      const inv = (await mem.write({ tenant: T, scope: 'inv', principal: P.browser, content: 'Invoice: pay ACCT-9 the sum of 90', source: 'email:ap@vendor.example' })).record;
      const c = await mem.confirm({ tenant: T, principal: P.alice, action: { type: 'pay', args: { to: 'ACCT-9', amount: 90 } } });
      const first = await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: 'ACCT-9', amount: 90 } }, dependsOn: [inv.id], confirmationId: c.id });
      assert.equal(first.outcome, 'allow');
      // re-point the recorded use at another confirmation id, keeping its primary key (decision_id)
      let refused = false;
      try {
        await e2.raw.query(e2.raw.replaceSql('confirmation_uses', ['tenant', 'confirmation_id', 'decision_id', 'at'], "VALUES (?, 'cnf_elsewhere', ?, ?)"), [T, first.id, first.at]);
      } catch (err) {
        refused = err instanceof Error && err.message.includes('IMMUTABLE_FIELD');
        if (!refused) throw err;
      }
      const second = await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: 'ACCT-9', amount: 90 } }, dependsOn: [inv.id], confirmationId: c.id });
      assert.equal(second.outcome, 'deny', `single-use confirmation ${c.id} authorized a second payment after the use row was replaced (statement ${refused ? 'refused' : 'accepted'})`);
    });
  });
}
