/**
 * HTTP routes for audit chain verification and export, and the metrics (route specs; handlers call
 * the facade).
 */
import { Readable } from 'node:stream';
import { computeMetrics } from '../../api/metrics.js';
import { assertNotExternal, assertReadsEverything } from '../exposure.js';
import { queries } from '../schemas.js';
import { type AnyRoute, ok, route, tenantFor } from './common.js';

const PAGE = 1000;

/** Audit chain verification and export, and the metrics of docs/design.md § Metrics. */
export const auditRoutes: readonly AnyRoute[] = [
  route({
    method: 'GET',
    path: '/v1/audit/verify',
    operationId: 'verifyAudit',
    tag: 'audit',
    summary: "Verify the tenant's hash chain, its newest signed checkpoint, and every row against the chain",
    auth: 'any',
    query: queries.Tenant,
    responses: { 200: 'AuditReport' },
    errors: [429],
    handler: async ({ identity, query, services }) => {
      assertNotExternal(identity, 'the audit verification');
      const tenant = tenantFor(identity, query.tenant);
      return ok(await services.expensive.run(tenant, 'verifyAudit', () => services.mem.verifyAudit({ tenant })));
    },
  }),
  route({
    method: 'GET',
    path: '/v1/audit/export',
    operationId: 'exportAudit',
    tag: 'audit',
    summary: "The tenant's audit chain as JSON lines, one entry per line in sequence order",
    description:
      'Each line is an AuditEntry {tenant, seq, prevHash, op, payload, policyVersion, hash}; hash = SHA-256 of the RFC 8785 JSON of {seq, prevHash, op, payload, policyVersion}. Payloads hold hashes, not content, but sources, evidence and action arguments as written: agent, tool and external principals get FORBIDDEN (403).',
    auth: 'any',
    query: queries.AuditExport,
    responses: { 200: { contentType: 'application/x-ndjson', item: 'AuditEntry', description: 'one AuditEntry per line' } },
    handler: async ({ identity, query, services }) => {
      const tenant = tenantFor(identity, query.tenant);
      assertReadsEverything(identity, 'the audit export');
      const driver = services.mem.driver;
      const head = await driver.auditHead(tenant);
      const last = head?.seq ?? 0;
      async function* lines(): AsyncGenerator<string> {
        for (let from = (query.after ?? 0) + 1; from <= last; from += PAGE) {
          const page = await driver.auditRange(tenant, from, Math.min(last, from + PAGE - 1));
          yield page.map((e) => `${JSON.stringify(e)}\n`).join('');
        }
      }
      return { status: 200, stream: Readable.from(lines()), contentType: 'application/x-ndjson; charset=utf-8' };
    },
  }),
  route({
    method: 'GET',
    path: '/v1/metrics',
    operationId: 'metrics',
    tag: 'audit',
    summary: 'The seven metrics of docs/design.md § Metrics, per risk tier, computed from the store (see src/api/metrics.ts)',
    description:
      'origin coverage, taint retention, laundering ASR (per channel), legitimate utility, corroboration validity, high-risk dependency rate, decision replay rate. Each is {numerator, denominator, value}; value is null when there is nothing to measure.',
    auth: 'any',
    query: queries.Metrics,
    responses: { 200: 'Metrics' },
    errors: [429],
    handler: async ({ identity, query, services }) => {
      assertNotExternal(identity, 'the metrics');
      const tenant = tenantFor(identity, query.tenant);
      return ok(await services.expensive.run(tenant, 'metrics', () => computeMetrics(services.mem, { tenant, replaySample: query.replaySample })));
    },
  }),
];
