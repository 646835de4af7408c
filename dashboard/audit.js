// The audit page: verify the hash chain and the signed checkpoint, export the log.
import { api, session } from './api.js';
import { errorBox, page } from './layout.js';
import { announce, h, table } from './ui.js';

export function auditPage() {
  const result = h('div.audit-result', { 'aria-live': 'polite' });
  const exportMsg = h('div', { 'aria-live': 'polite' });
  const verify = h(
    'button',
    {
      type: 'button',
      id: 'verify',
      on: {
        click: async () => {
          result.replaceChildren(h('p', 'Verifying the hash chain, the signed checkpoint and every row…'));
          try {
            const rep = await api.verify();
            const rows = rep.tenants.map((t) =>
              h('tr', h('th', { scope: 'row' }, t.tenant), h('td', t.chain.ok ? '✓ intact' : `✖ broken at seq ${t.chain.firstBadSeq ?? '?'}`), h('td', String(t.chain.entries)), h('td', t.checkpoint === null ? 'none yet' : t.checkpoint.ok ? `✓ seq ${t.checkpoint.seq}` : `✖ ${t.checkpoint.problem ?? ''}`), h('td', `${t.records.checked} checked, ${t.records.bad.length} bad`), h('td', t.message)),
            );
            result.replaceChildren(h(`p.msg.${rep.ok ? 'msg-ok' : 'msg-error'}.verify-verdict`, { role: rep.ok ? 'status' : 'alert' }, h('strong', rep.ok ? 'Verified: the audit chain is intact.' : 'Verification FAILED.')), table('Verification per tenant', ['Tenant', 'Chain', 'Entries', 'Checkpoint', 'Records', 'Message'], rows));
            const mine = rep.tenants.find((t) => t.tenant === (session.who.admin ? session.tenant : session.who.tenant));
            if (mine) result.append(await pendingEntries(mine));
            announce(rep.ok ? 'Audit chain verified' : 'Audit verification failed');
          } catch (e) {
            result.replaceChildren(errorBox(e));
          }
        },
      },
    },
    'Verify the audit chain',
  );
  const exp = h(
    'button',
    {
      type: 'button',
      id: 'export',
      on: {
        click: async () => {
          try {
            const r = await api.exportAudit();
            const blob = await r.blob();
            const tenant = session.who.admin ? session.tenant : session.who.tenant;
            const a = h('a', { href: URL.createObjectURL(blob), download: `memauth-audit-${tenant}.ndjson` }, `Download memauth-audit-${tenant}.ndjson (${blob.size} bytes)`);
            exportMsg.replaceChildren(h('p.msg.msg-ok', a));
            a.click();
            announce('Audit export ready');
          } catch (e) {
            exportMsg.replaceChildren(errorBox(e));
          }
        },
      },
    },
    'Export the audit log (JSON lines)',
  );
  page(
    'Audit',
    h('p.lead', 'One SHA-256 hash chain per tenant over every write, derivation, corroboration, confirmation, decision, deletion and policy; a signed checkpoint makes truncation detectable.'),
    h('section', { 'aria-labelledby': 'h-verify' }, h('h2', { id: 'h-verify' }, 'Verify'), h('p', verify), result),
    h('section', { 'aria-labelledby': 'h-export' }, h('h2', { id: 'h-export' }, 'Export'), h('p', exp), exportMsg),
  );
}

/** Entries of the export (JSON lines) after `after`, at most `max`. */
async function entriesAfter(after, max) {
  const text = await (await api.exportAudit(after)).text();
  return text.split('\n').filter(Boolean).slice(0, max).map((l) => JSON.parse(l));
}

/** What an entry is about, in a few words (payload fields as text). */
const about = (e) => ['recordId', 'principalId', 'decisionId', 'id', 'tokenId'].map((k) => e.payload?.[k]).find((v) => typeof v === 'string') ?? '';

/** The entries past the newest signed checkpoint: protected by the hash chain only, until the next checkpoint signs them. */
async function pendingEntries(t) {
  const after = t.checkpoint?.seq ?? 0;
  const count = t.chain.entries - after;
  const box = h('section.audit-pending', { 'aria-labelledby': 'h-pending' }, h('h2', { id: 'h-pending' }, `Entries past the last signed checkpoint (${count})`));
  if (t.chain.entries === 0) return box.append(h('p.muted.empty', 'No audit entry yet: nothing has been written or decided in this tenant.')), box;
  box.append(h('p.help', t.checkpoint === null ? 'No checkpoint has been signed yet: every entry is protected by the hash chain only (memauth checkpoint signs the head).' : `The newest checkpoint signs the chain up to seq ${after}. Entries after it are protected by the hash chain only until the next checkpoint: a truncation back to seq ${after} would go unnoticed.`));
  if (count <= 0) return box.append(h('p.muted.empty', 'None: the checkpoint covers the whole chain.')), box;
  const shown = await entriesAfter(after, 200);
  const rows = shown.map((e) => h('tr', h('th', { scope: 'row' }, String(e.seq)), h('td', h('code', e.op)), h('td.mono', about(e)), h('td.mono', e.hash.slice(0, 16) + '…')));
  box.append(table(`Entries after seq ${after}${count > shown.length ? ` (first ${shown.length} of ${count})` : ''}`, ['Seq', 'Operation', 'About', 'Hash'], rows, { className: 'pending' }));
  return box;
}
