/**
 * Tenant isolation over the HTTP API: with a token of one tenant, every read, search, list,
 * derive, corroboration (record or evidence), confirmation, decision (dependsOn, confirmation),
 * replay, delete and export touching the other tenant's ids is refused or sees nothing — in
 * both directions — and the other tenant's chain does not move.
 */
import { http } from '../test/server-helpers.js';
import { type Options, type SuiteResult, Tally } from './common.js';
import { startCast } from './srv.js';

export async function run(_o: Options): Promise<SuiteResult> {
  const tally = new Tally('isolation: cross-tenant (HTTP)');
  const c = await startCast();
  const url = c.srv.url;
  try {
    const seed = async (t: string): Promise<{ rec: string; der: string; dec: string; cnf: string; secret: string }> => {
      const secret = `SECRET-${t}-${Math.random().toString(36).slice(2)}`;
      const w = await http(url, 'POST', '/v1/memories', { token: c.tok[`${t}/bank`], body: { scope: 'vendors', content: `${t} pays ${secret}`, source: 'bankapi:x', session: 'b1' } });
      const d = await http(url, 'POST', '/v1/derivations', {
        token: c.tok[`${t}/agent`],
        body: { from: [w.body.record.id], transform: 'summarize', content: `${t} summary ${secret}`, session: 's1' },
      });
      const cn = await http(url, 'POST', '/v1/confirmations', { token: c.tok[`${t}/alice`], body: { action: { type: 'pay', args: { to: secret, amount: 1 } }, maxUses: 5 } });
      const dc = await http(url, 'POST', '/v1/decisions', { token: c.tok[`${t}/agent`], body: { session: 's1', action: { type: 'pay', args: { to: secret, amount: 1 } } } });
      if (w.status !== 201 || d.status !== 201 || cn.status !== 201 || dc.status !== 201) throw new Error(`seeding ${t}: ${w.status} ${d.status} ${cn.status} ${dc.status} ${dc.text}`);
      return { rec: w.body.record.id, der: d.body.id, dec: dc.body.id, cnf: cn.body.id, secret };
    };
    const ids = { acme: await seed('acme'), globex: await seed('globex') };
    for (const [me, other] of [
      ['acme', 'globex'],
      ['globex', 'acme'],
    ] as const) {
      const o = ids[other];
      const T = (p: string): string => c.tok[`${me}/${p}`] as string;
      const headBefore = (await c.srv.memory.driver.auditHead(other))?.seq;
      const refused = async (what: string, method: string, path: string, token: string, body?: unknown, statuses = [403, 404]): Promise<void> => {
        const r = await http(url, method, path, { token, ...(body !== undefined ? { body } : {}) });
        tally.ok(statuses.includes(r.status) && typeof r.body?.code === 'string' && !r.text.includes(o.secret), () => `${me}→${other} ${what}: ${r.status} ${r.text.slice(0, 200)}`);
      };
      const blind = async (what: string, method: string, path: string, token: string, body?: unknown): Promise<void> => {
        const r = await http(url, method, path, { token, ...(body !== undefined ? { body } : {}) });
        tally.ok(r.status < 500 && !r.text.includes(o.secret) && !r.text.includes(o.rec), () => `${me}→${other} ${what}: ${r.status} leaks: ${r.text.slice(0, 200)}`);
      };
      for (const p of ['agent', 'alice', 'bank', 'mallory']) {
        await refused(`get (${p})`, 'GET', `/v1/memories/${o.rec}?session=x`, T(p));
        await refused(`get derived (${p})`, 'GET', `/v1/memories/${o.der}?session=x`, T(p));
        await refused(`lineage (${p})`, 'GET', `/v1/memories/${o.der}/lineage`, T(p));
        await refused(`decision (${p})`, 'GET', `/v1/decisions/${o.dec}`, T(p));
        await refused(`replay (${p})`, 'GET', `/v1/decisions/${o.dec}/replay`, T(p));
        await refused(`delete (${p})`, 'DELETE', `/v1/memories/${o.rec}`, T(p));
        await blind(`search (${p})`, 'POST', '/v1/memories/search', T(p), { scope: 'vendors', query: o.secret });
        await blind(`list (${p})`, 'GET', '/v1/memories?scope=vendors&includeDeleted=true', T(p));
        await blind(`decisions list (${p})`, 'GET', '/v1/decisions', T(p));
        await blind(`audit export (${p})`, 'GET', '/v1/audit/export', T(p));
        await blind(`audit verify (${p})`, 'GET', '/v1/audit/verify', T(p));
        await blind(`metrics (${p})`, 'GET', '/v1/metrics', T(p));
        await refused(`derive from (${p})`, 'POST', '/v1/derivations', T(p), { from: [o.rec], transform: 'summarize', content: 'x' });
        await refused(`corroborate record (${p})`, 'POST', '/v1/corroborations', T(p), { recordId: o.rec, evidence: 'registry:x' });
        await refused(`decide dependsOn (${p})`, 'POST', '/v1/decisions', T(p), { action: { type: 'pay', args: { to: o.secret, amount: 1 } }, dependsOn: [o.rec] });
        await refused(`name the other tenant in a body (${p})`, 'POST', '/v1/memories/search', T(p), { tenant: other, scope: 'vendors', query: o.secret, session: 'x' });
        await refused(`name the other tenant in a query (${p})`, 'GET', `/v1/memories?tenant=${other}`, T(p));
      }
      const { rec: mine } = ids[me];
      await refused('corroborate with evidence memory:other', 'POST', '/v1/corroborations', T('registry'), { recordId: mine, evidence: `memory:${o.rec}` });
      await refused("confirm naming the other tenant's memory", 'POST', '/v1/confirmations', T('alice'), { action: { type: 'pay', args: { to: 'X', amount: 1 } }, memoryIds: [o.rec] });
      // the other tenant's confirmation cannot be cited (it is for exactly this action there)
      const d = await http(url, 'POST', '/v1/decisions', { token: T('agent'), body: { action: { type: 'pay', args: { to: o.secret, amount: 1 } }, confirmationId: o.cnf } });
      tally.ok((d.status === 201 && d.body.outcome === 'deny') || d.status === 404, () => `${me}→${other} cite other tenant's confirmation: ${d.status} ${d.text.slice(0, 200)}`);
      const headAfter = (await c.srv.memory.driver.auditHead(other))?.seq;
      tally.ok(headBefore === headAfter, () => `${other}'s chain moved under ${me}'s requests: ${headBefore} → ${headAfter}`);
    }
    const v = await c.srv.memory.verifyAudit({});
    tally.ok(v.ok, () => `verify: ${v.tenants.map((t) => t.message).join('; ')}`);
  } finally {
    await c.close();
  }
  tally.note('tokens of 4 principal kinds × 17 cross-tenant requests each way, plus evidence, confirmation ids and memory ids; both chains verified');
  return tally.result();
}
