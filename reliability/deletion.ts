/**
 * Deletion and retention: after delete and after expiry + sweepExpired, no byte of the content is
 * left in the database file (after a WAL checkpoint), in search or in the FTS index; derived
 * records show deleted_source and decisions citing them are denied; the audit export holds no
 * content; the chain verifies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteDriver } from '../src/index.js';
import { type Options, type SuiteResult, Tally, openStore, registerCast, rmDir, tempDir } from './common.js';

export async function run(o: Options): Promise<SuiteResult> {
  const tally = new Tally('deletion & retention');
  const dir = tempDir();
  const file = join(dir, 'memauth.db');
  let now = Date.parse('2030-01-01T00:00:00Z');
  const mem = await openStore(file, { clock: () => new Date(now) });
  const n = o.long ? 200 : 40;
  const T = 'acme';
  try {
    await registerCast(mem, T);
    const terms: Array<{ id: string; term: string; derived: string; how: 'delete' | 'expiry' }> = [];
    for (let i = 0; i < n; i += 1) {
      const term = `zq${i}x${Math.random().toString(36).slice(2, 10)}uniq`;
      const how = i % 2 === 0 ? 'delete' : 'expiry';
      const s = `s${i}`;
      const { record } = await mem.write({
        tenant: T,
        scope: 'vendors',
        principal: i % 3 === 0 ? 'browser' : 'bank',
        session: s,
        content: `Vendor ${i} settles through ACCT-${term} per ${term.toUpperCase()} notice`,
        source: i % 3 === 0 ? 'https://ex.example/x' : 'bankapi:x',
        ...(how === 'expiry' ? { expiresAt: new Date(now + 3600_000).toISOString() } : {}),
      });
      const d = await mem.derive({ tenant: T, principal: 'agent', from: [record.id], transform: 'summarize', content: `summary ${i}: pays a vendor`, session: s });
      terms.push({ id: record.id, term, derived: d.id, how });
    }
    // keep a few unrelated records
    for (let i = 0; i < 10; i += 1) await mem.write({ tenant: T, scope: 'vendors', principal: 'bank', content: `kept record ${i} stays`, source: 'bankapi:k' });
    for (const t of terms) if (t.how === 'delete') await mem.delete({ tenant: T, id: t.id, principal: 'alice' });
    now += 7200_000;
    const swept = await mem.sweepExpired({ tenant: T });
    tally.ok(swept.length === terms.filter((t) => t.how === 'expiry').length, () => `sweepExpired erased ${swept.length}`);
    const db = (mem.driver as SqliteDriver).unsafeDatabase();
    db.pragma('wal_checkpoint(TRUNCATE)');
    const bytes =
      readFileSync(file).toString('latin1') +
      (() => {
        try {
          return readFileSync(`${file}-wal`).toString('latin1');
        } catch {
          return '';
        }
      })();
    const exportText = (await mem.driver.auditRange(T, 1, (await mem.driver.auditHead(T))?.seq ?? 0)).map((e) => JSON.stringify(e)).join('\n');
    for (const t of terms) {
      const inFile = bytes.includes(t.term) || bytes.includes(t.term.toUpperCase());
      if (inFile) tally.lost += 1;
      tally.ok(!inFile, () => `${t.how}: term ${t.term} still in the database file`);
      const hits = await mem.search({ tenant: T, scope: 'vendors', query: t.term });
      tally.ok(hits.length === 0, () => `${t.how}: search finds ${t.term}`);
      const table = (mem.driver as SqliteDriver).searchIndexTable(T) as string;
      const fts = db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`).get(`"${t.term}"`) as { n: number };
      tally.ok(fts.n === 0, () => `${t.how}: FTS still matches ${t.term}`);
      const v = await mem.get({ tenant: T, id: t.derived });
      tally.ok(v.deletedSources.includes(t.id), () => `${t.how}: derived ${t.derived} does not show deleted_source`);
      const orig = await mem.get({ tenant: T, id: t.id });
      tally.ok(orig.content === null && orig.status === 'deleted', () => `${t.how}: record ${t.id} status ${orig.status}`);
      const d = await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: `ACCT-${t.term}`, amount: 1 } }, dependsOn: [t.id] });
      tally.ok(d.outcome === 'deny' && d.reasons.some((r) => r.code === 'deleted_source'), () => `${t.how}: decision citing the erased record: ${d.outcome} ${d.reasons.map((r) => r.code)}`);
      const d2 = await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: `ACCT-${t.term}`, amount: 1 } }, dependsOn: [t.derived] });
      tally.ok(d2.outcome === 'deny', () => `${t.how}: decision citing the derived record: ${d2.outcome}`);
      tally.ok(!exportText.includes(t.term), () => `${t.how}: audit export contains ${t.term}`);
    }
    const kept = await mem.search({ tenant: T, scope: 'vendors', query: 'kept' });
    tally.ok(kept.length === 10, () => `unrelated records: ${kept.length}/10 still found`);
    const v = await mem.verifyAudit({ tenant: T });
    tally.ok(v.ok, () => `verify: ${v.tenants.map((x) => x.message).join('; ')}`);
    tally.note(
      `${n} records (${n / 2} deleted, ${n / 2} expired and swept), each with a derived record; file + WAL bytes, search, FTS, deleted_source, gate, audit export checked; no vector table exists in this schema`,
    );
  } finally {
    await mem.close();
    rmDir(dir);
  }
  return tally.result();
}
