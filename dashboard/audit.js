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
