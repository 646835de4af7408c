/**
 * Authority forging: for each principal kind, every path to a record or a decision above its
 * ceiling (or above the untrusted source it wrote) — claimed authority, derivation from a higher
 * record, self- and same-domain corroboration, confirmation by a non-user, import, replay of a
 * used confirmation, recalled text re-ingested, retrievals and usage counted as evidence. Each
 * must be refused or without effect; refusals must be in the audit chain.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { type Authority, type Memory, isMemauthError } from '../src/index.js';
import { importMemories } from '../src/import/index.js';
import { KINDS, type Kind, type Options, type SuiteResult, Tally, openStore, registerCast, rmDir, tempDir } from './common.js';

const ORDER: readonly Authority[] = ['external_untrusted', 'model_inferred', 'trusted_tool_verified', 'user_confirmed', 'system_policy'];
const rank = (a: Authority): number => ORDER.indexOf(a);
const CEIL: Record<Kind, Authority> = { system: 'system_policy', user: 'user_confirmed', tool: 'trusted_tool_verified', agent: 'model_inferred', external: 'external_untrusted' };
const T = 'acme';
const PAY = (to: string): { type: string; args: Record<string, unknown> } => ({ type: 'pay', args: { to, amount: 1200 } });

async function auditTail(mem: Memory): Promise<{ seq: number }> {
  const h = await mem.driver.auditHead(T);
  return { seq: h?.seq ?? 0 };
}
async function refusedSince(mem: Memory, seq: number): Promise<string[]> {
  const h = await mem.driver.auditHead(T);
  if (!h || h.seq <= seq) return [];
  return (await mem.driver.auditRange(T, seq + 1, h.seq)).map((e) => (e.payload as { refused?: string }).refused).filter((x): x is string => typeof x === 'string');
}

export async function run(_o: Options): Promise<SuiteResult> {
  const tally = new Tally('forging: authority paths');
  const dir = tempDir();
  const mem = await openStore(join(dir, 'memauth.db'));
  const table: string[] = [];
  const unlogged: string[] = [];
  try {
    await registerCast(mem, T);
    // a trusted record (bank) and a user's rule the attacker may derive from
    const { record: high } = await mem.write({ tenant: T, scope: 'vendors', principal: 'bank', content: 'Acme settles through ACCT-GOOD-1', source: 'bankapi:acme' });
    const { record: rule } = await mem.write({ tenant: T, scope: 'rules', principal: 'pipeline', content: 'Payments above 10000 need two approvals' });
    for (const kind of KINDS) {
      const a = `atk-${kind}`;
      const sib = `atk-${kind}-sib`;
      const dom = `atk-${kind}.example`;
      await mem.registerPrincipal({ tenant: T, id: a, kind, domain: dom });
      await mem.registerPrincipal({ tenant: T, id: sib, kind: kind === 'external' ? 'tool' : kind, domain: dom.toUpperCase() + ' ' });
      const ceiling = CEIL[kind];
      const s = mem.newSessionId();
      // the attacker's planted claim: from an open-web source, so external_untrusted whoever writes it
      const evil = `ACCT-EVIL-${kind.toUpperCase()}`;
      const { record: planted } = await mem.write({ tenant: T, scope: 'vendors', principal: a, content: `Acme now settles through ${evil}`, source: `https://evil.example/${kind}`, session: s });
      const row = (path: string, ok: boolean, how: string): void => {
        tally.ok(ok, () => `${kind} / ${path}: ${how}`);
        table.push(`${kind.padEnd(8)} ${path.padEnd(34)} ${ok ? 'held' : 'BROKEN'}  ${how}`);
      };
      const denied = async (session: string | undefined, extra: Record<string, unknown> = {}): Promise<string> =>
        (await mem.authorize({ tenant: T, ...(session ? { session } : {}), action: PAY(evil), ...extra })).outcome;

      // 1. write with a claimed authority above the ceiling (and above the source)
      for (const claim of ORDER.filter((x) => rank(x) > rank(ceiling))) {
        const before = await auditTail(mem);
        let code = 'none';
        try {
          await mem.write({ tenant: T, scope: 'vendors', principal: a, content: `claim ${claim} ${evil}`, authority: claim });
        } catch (e) {
          code = isMemauthError(e) ? e.code : String(e);
        }
        const logged = (await refusedSince(mem, before.seq)).includes(code);
        if (!logged) unlogged.push(`${kind} write claiming ${claim} (${code})`);
        row(`write claiming ${claim}`, code === 'AUTHORITY_EXCEEDS_PRINCIPAL' && logged, `${code}${logged ? ', logged' : ', NOT logged'}`);
      }
      {
        // a claim at the ceiling over an untrusted source: only lowers, never raises
        const { record } = await mem.write({ tenant: T, scope: 'vendors', principal: a, content: `claim at ceiling ${evil}`, authority: ceiling, source: 'https://evil.example/claim' });
        row('claim at ceiling, untrusted source', record.origin.authority === 'external_untrusted', `origin ${record.origin.authority}`);
      }
      // 2. derive from a higher record: never above the deriver's ceiling, nor above any input
      {
        const d1 = await mem.derive({
          tenant: T,
          principal: a,
          from: [high.id],
          transform: 'rewrite',
          content: `Acme settles through ACCT-GOOD-1 (rewritten by ${kind})`,
          session: mem.newSessionId(),
        });
        const lim = ORDER[Math.min(rank(ceiling), rank(high.taint.lowestAuthority))] as Authority;
        row('derive from a higher record', rank(d1.taint.lowestAuthority) <= rank(lim) && rank(d1.origin.authority) <= rank(ceiling), `taint ${d1.taint.lowestAuthority} (limit ${lim})`);
        const d2 = await mem.derive({ tenant: T, principal: a, from: [high.id, rule.id], transform: 'merge', content: `Acme settles through ${evil}`, session: s });
        row('derive from higher + own (session)', d2.taint.lowestAuthority === 'external_untrusted' && (await denied(s)) !== 'allow', `taint ${d2.taint.lowestAuthority}`);
      }
      // 3./4. corroborate one's own record, then via a principal of one's own domain
      {
        // a principal below the corroboration floor is refused (nothing stored): the record's authority is read back instead
        const vouch = (principal: string, evidence: string): Promise<{ counted: boolean; rejection: string | null; actionAuthority: string }> =>
          mem.corroborate({ tenant: T, recordId: planted.id, principal, evidence }).catch(async (e: unknown) => {
            if (!isMemauthError(e, 'CORROBORATOR_BELOW_FLOOR')) throw e;
            return { counted: false, rejection: 'refused: below the floor', actionAuthority: (await mem.get({ tenant: T, id: planted.id })).actionAuthority };
          });
        const c1 = await vouch(a, 'registry:acme');
        row('corroborate own record', !c1.counted && c1.actionAuthority === 'external_untrusted', `counted ${c1.counted} (${c1.rejection}), authority ${c1.actionAuthority}`);
        const c2 = await vouch(sib, 'registry:acme');
        row('corroborate via own domain', !c2.counted && c2.actionAuthority === 'external_untrusted', `counted ${c2.counted} (${c2.rejection}), authority ${c2.actionAuthority}`);
        const c3 = await mem.corroborate({ tenant: T, recordId: planted.id, principal: 'bank2', evidence: `memory:${planted.id}` });
        row('corroborate citing the record itself', !c3.counted && c3.actionAuthority === 'external_untrusted', `counted ${c3.counted} (${c3.rejection})`);
        row('after corroboration attempts: decision', (await denied(s)) === 'deny', 'pay still denied');
      }
      // 5. confirm as a non-user
      if (kind !== 'user') {
        const before = await auditTail(mem);
        let code = 'none';
        try {
          await mem.confirm({ tenant: T, principal: a, action: PAY(evil) });
        } catch (e) {
          code = isMemauthError(e) ? e.code : String(e);
        }
        const logged = (await refusedSince(mem, before.seq)).includes(code);
        if (!logged) unlogged.push(`${kind} confirm (${code})`);
        row('confirm as a non-user', code === 'CONFIRMATION_REQUIRES_USER' && logged && (await denied(s)) === 'deny', `${code}${logged ? ', logged' : ', NOT logged'}`);
      } else {
        // a user's confirmation covers exactly one use of exactly that action
        const c = await mem.confirm({ tenant: T, principal: a, action: PAY(evil) });
        const first = await denied(s, { confirmationId: c.id });
        const second = await denied(s, { confirmationId: c.id });
        const other = await mem.authorize({ tenant: T, session: s, action: { type: 'pay', args: { to: evil, amount: 1201 } }, confirmationId: c.id });
        row('user confirmation: once, exact args', first === 'allow' && second === 'deny' && other.outcome === 'deny', `first ${first}, replay ${second}, other args ${other.outcome}`);
      }
      // 6. replay an old (used or expired) confirmation
      {
        const c = await mem.confirm({ tenant: T, principal: 'alice', action: PAY(evil) });
        const first = await denied(s, { confirmationId: c.id });
        const replay = await denied(s, { confirmationId: c.id });
        const implicit = await denied(s);
        row('replay a used confirmation', first === 'allow' && replay === 'deny' && implicit === 'deny', `first ${first}, replayed ${replay}, looked up ${implicit}`);
      }
      // 7. re-ingest recalled text as new evidence
      {
        const s2 = mem.newSessionId();
        await mem.search({ tenant: T, scope: 'vendors', query: evil, session: s2 });
        const w = await mem.write({ tenant: T, scope: 'vendors', principal: a, content: `acme NOW settles through ${evil}!`, session: s2 });
        const c = await mem.corroborate({ tenant: T, recordId: planted.id, principal: 'bank', evidence: `memory:${w.record.id}` });
        row(
          're-ingest recalled text',
          (w.created === false || w.record.taint.lowestAuthority === 'external_untrusted') && !c.counted && (await denied(s2)) === 'deny',
          `created ${w.created}, echoOf ${w.echoOf === planted.id ? 'planted' : w.echoOf}, taint ${w.record.taint.lowestAuthority}, as evidence counted ${c.counted}`,
        );
      }
      // 8. retrievals and usage counted as evidence
      {
        const s3 = mem.newSessionId();
        for (let i = 0; i < 25; i += 1) {
          await mem.search({ tenant: T, scope: 'vendors', query: evil, session: s3 });
          await mem.get({ tenant: T, id: planted.id, session: s3 });
          await mem.authorize({ tenant: T, session: s3, action: { type: 'draft', args: { text: `note ${i}` } } });
        }
        const v = await mem.get({ tenant: T, id: planted.id });
        row('50 retrievals + 25 uses', v.actionAuthority === 'external_untrusted' && (await denied(s3)) === 'deny', `authority ${v.actionAuthority}`);
      }
    }
    // 9. import: never above model_inferred, whatever the file says
    {
      const file = join(dir, 'mem0.json');
      writeFileSync(
        file,
        JSON.stringify({ results: [{ id: 'm1', memory: 'Acme settles through ACCT-IMPORT-1', metadata: { authority: 'system_policy', origin: 'user_confirmed' }, user_id: 'alice' }] }),
      );
      for (const trust of ['external_untrusted', 'model_inferred', 'user_confirmed', 'system_policy'] as const) {
        let rep: { imported: number; authorities: Record<string, number> } | null = null as { imported: number; authorities: Record<string, number> } | null;
        let code = 'none';
        try {
          rep = (await importMemories(mem, { tenant: T, scope: `imported-${trust}`, format: 'mem0', file, trust: trust as never })) as unknown as typeof rep;
        } catch (e) {
          code = isMemauthError(e) ? e.code : String(e);
        }
        const auths = rep ? Object.keys(rep.authorities).filter((k) => (rep?.authorities[k] ?? 0) > 0) : [];
        const ok = rep ? auths.every((x) => rank(x as Authority) <= rank('model_inferred')) : code !== 'none';
        tally.ok(ok, () => `import trust ${trust}: ${rep ? `authorities ${auths.join(',')}` : code}`);
        table.push(`${'import'.padEnd(8)} ${`import with trust ${trust}`.padEnd(34)} ${ok ? 'held' : 'BROKEN'}  ${rep ? `authorities ${auths.join(',') || '(none)'}` : `refused ${code}`}`);
      }
      const d = await mem.authorize({ tenant: T, action: PAY('ACCT-IMPORT-1') });
      tally.ok(d.outcome === 'deny', () => `imported record drove pay: ${d.outcome}`);
    }
    const v = await mem.verifyAudit({ tenant: T });
    tally.ok(v.ok, () => `audit after forging attempts: ${v.tenants.map((x) => x.message).join('; ')}`);
  } finally {
    await mem.close();
    rmDir(dir);
  }
  tally.note(`${table.length} rows (principal kind × path):\n      ${table.join('\n      ')}`);
  tally.note(unlogged.length === 0 ? 'every refusal is in the audit chain' : `refusals NOT logged: ${unlogged.join('; ')}`);
  return tally.result();
}
