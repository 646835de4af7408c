/**
 * The HTTP API end to end: a real `memauth serve` process, real HTTP requests. Auth and tokens,
 * the main memory / gate / audit paths, the OpenAPI document, errors, limits, and that bad input
 * stores nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Res, type ServerProcess, addPrincipal, client, expectError, expectStatus, http, startServerProcess, tempDir } from './server-helpers.js';

let srv: ServerProcess;
let admin: string;
const T = 'acme';
const tok: Record<string, string> = {};

before(async () => {
  srv = await startServerProcess({ cwd: tempDir(), args: ['--db', 'api.db', '--port', '0', '--log-level', 'warn', '--body-limit', '64kb', '--max-content', '2000'] });
  assert.ok(srv.adminToken, 'a fresh database prints an admin token');
  admin = srv.adminToken as string;
  tok.alice = await addPrincipal(srv.url, admin, { tenant: T, id: 'alice', kind: 'user', domain: 'acme-staff' });
  tok.browser = await addPrincipal(srv.url, admin, { tenant: T, id: 'browser', kind: 'tool', domain: 'browser' });
  tok.assistant = await addPrincipal(srv.url, admin, { tenant: T, id: 'assistant', kind: 'agent', domain: 'agent-runtime' });
  tok.erp = await addPrincipal(srv.url, admin, { tenant: T, id: 'erp', kind: 'system', domain: 'erp' });
  tok.bank = await addPrincipal(srv.url, admin, { tenant: T, id: 'bank', kind: 'system', domain: 'bank' });
  tok.crm = await addPrincipal(srv.url, admin, { tenant: T, id: 'crm', kind: 'system', domain: 'crm' });
});

after(async () => {
  const code = await srv.stop('SIGTERM');
  assert.equal(code, 0, `clean exit on SIGTERM\n${srv.stderr()}`);
});

describe('system endpoints', () => {
  test('GET /healthz needs no token', async () => {
    const r = await http(srv.url, 'GET', '/healthz');
    expectStatus(r, 200);
    assert.equal(r.body.status, 'ok');
    assert.equal(r.body.storage, 'sqlite');
  });

  test('GET /openapi.json is OpenAPI 3.1, covers every route, and every $ref resolves', async () => {
    const r = await http(srv.url, 'GET', '/openapi.json');
    expectStatus(r, 200);
    const doc = r.body;
    assert.equal(doc.openapi, '3.1.0');
    const expected: Array<[string, string]> = [
      ['/healthz', 'get'],
      ['/openapi.json', 'get'],
      ['/v1/whoami', 'get'],
      ['/v1/policy', 'get'],
      ['/v1/principals', 'post'],
      ['/v1/principals', 'get'],
      ['/v1/tokens', 'get'],
      ['/v1/tokens', 'post'],
      ['/v1/tokens/{id}/rotate', 'post'],
      ['/v1/tokens/{id}', 'delete'],
      ['/v1/memories', 'post'],
      ['/v1/memories', 'get'],
      ['/v1/memories/search', 'post'],
      ['/v1/memories/{id}', 'get'],
      ['/v1/memories/{id}', 'delete'],
      ['/v1/memories/{id}/lineage', 'get'],
      ['/v1/derivations', 'post'],
      ['/v1/corroborations', 'post'],
      ['/v1/confirmations', 'post'],
      ['/v1/decisions', 'post'],
      ['/v1/decisions', 'get'],
      ['/v1/decisions/{id}', 'get'],
      ['/v1/decisions/{id}/replay', 'get'],
      ['/v1/audit/verify', 'get'],
      ['/v1/audit/export', 'get'],
      ['/v1/metrics', 'get'],
      ['/mcp', 'post'],
    ];
    for (const [p, m] of expected) assert.ok(doc.paths[p]?.[m], `${m.toUpperCase()} ${p} is documented`);
    const schemas = doc.components.schemas;
    for (const name of ['MemoryWrite', 'WriteResult', 'Decision', 'ReplayResult', 'Metrics', 'Error', 'RecordView']) assert.ok(schemas[name], `component ${name}`);
    // the write body is the library's schema: unknown fields refused, tenant/principal optional (the token fixes them)
    assert.equal(schemas.MemoryWrite.additionalProperties, false);
    assert.ok(schemas.MemoryWrite.required.includes('content') && !schemas.MemoryWrite.required.includes('tenant'));
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    assert.ok(refs.length > 20);
    for (const ref of refs) {
      const name = ref.slice('"$ref":"#/components/schemas/'.length, -1);
      assert.ok(schemas[name], `${ref} resolves`);
    }
    assert.deepEqual(doc.paths['/v1/memories'].post.security, [{ bearer: [] }]);
    assert.deepEqual(doc.paths['/healthz'].get.security, []);
  });

  test('an unknown route is a JSON 404', async () => {
    expectError(await http(srv.url, 'GET', '/v1/nope', { token: admin }), 404, 'NOT_FOUND');
  });
});

describe('authentication', () => {
  test('no, malformed or unknown token: 401 UNAUTHENTICATED with WWW-Authenticate', async () => {
    const none = await http(srv.url, 'GET', '/v1/memories');
    expectError(none, 401, 'UNAUTHENTICATED');
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    expectError(await http(srv.url, 'GET', '/v1/memories', { token: 'not-a-token' }), 401, 'UNAUTHENTICATED');
    expectError(await http(srv.url, 'GET', '/v1/memories', { token: `mat_${'A'.repeat(43)}` }), 401, 'UNAUTHENTICATED');
  });

  test('whoami: the token fixes principal, tenant and ceiling', async () => {
    const me = await client(srv.url, tok.browser as string).get('/v1/whoami');
    expectStatus(me, 200);
    assert.equal(me.body.admin, false);
    assert.equal(me.body.tenant, T);
    assert.equal(me.body.principal.id, 'browser');
    assert.equal(me.body.principal.maxAuthority, 'trusted_tool_verified');
    const a = await client(srv.url, admin).get('/v1/whoami');
    assert.equal(a.body.admin, true);
  });

  test('admin endpoints need the admin token; writes need a principal token', async () => {
    expectError(await client(srv.url, tok.alice as string).post('/v1/principals', { tenant: T, id: 'x', kind: 'user', domain: 'd' }), 403, 'ADMIN_REQUIRED');
    expectError(await client(srv.url, tok.alice as string).get('/v1/tokens'), 403, 'ADMIN_REQUIRED');
    expectError(await client(srv.url, admin).post('/v1/memories', { tenant: T, scope: 's', content: 'x' }), 403, 'PRINCIPAL_TOKEN_REQUIRED');
    expectError(await client(srv.url, admin).post('/v1/memories', { tenant: T, principal: 'alice', scope: 's', content: 'x' }), 403, 'PRINCIPAL_TOKEN_REQUIRED');
  });

  test('a principal token cannot name another tenant or principal', async () => {
    const c = client(srv.url, tok.browser as string);
    expectError(await c.post('/v1/memories', { tenant: 'globex', scope: 's', content: 'x' }), 403, 'TENANT_MISMATCH');
    expectError(await c.post('/v1/memories', { principal: 'alice', scope: 's', content: 'x' }), 403, 'PRINCIPAL_MISMATCH');
    expectError(await c.post('/v1/memories/search', { tenant: 'globex', scope: 's', query: 'x', session: 'tm' }), 403, 'TENANT_MISMATCH');
    // naming its own tenant and principal is fine
    expectStatus(await c.post('/v1/memories', { tenant: T, principal: 'browser', scope: 'misc', content: 'the browser names itself' }), 201);
  });

  test('the admin token must name the tenant', async () => {
    expectError(await client(srv.url, admin).get('/v1/memories'), 400, 'TENANT_REQUIRED');
    expectStatus(await client(srv.url, admin).get(`/v1/memories?tenant=${T}`), 200);
  });
});

describe('tokens: list, rotate, revoke', () => {
  test('listing shows metadata, never a secret or a hash', async () => {
    const r = await client(srv.url, admin).get(`/v1/tokens?tenant=${T}`);
    expectStatus(r, 200);
    assert.ok(r.body.tokens.length >= 6);
    for (const t of r.body.tokens) {
      assert.deepEqual(Object.keys(t).sort(), ['admin', 'createdAt', 'id', 'principal', 'revokedAt', 'tenant']);
    }
    assert.ok(!r.text.includes('mat_'));
    const admins = await client(srv.url, admin).get('/v1/tokens');
    assert.ok(admins.body.tokens.every((t: { admin: boolean }) => t.admin));
  });

  test('rotation: the new token works, the old one is refused at once', async () => {
    const old = await addPrincipal(srv.url, admin, { tenant: T, id: 'rotator', kind: 'agent', domain: 'rot' });
    const me = await client(srv.url, old).get('/v1/whoami');
    const r = await client(srv.url, admin).post(`/v1/tokens/${me.body.tokenId}/rotate`);
    expectStatus(r, 201);
    assert.equal(r.body.revoked.id, me.body.tokenId);
    assert.ok(r.body.revoked.revokedAt);
    expectError(await client(srv.url, old).get('/v1/whoami'), 401, 'UNAUTHENTICATED');
    const now = await client(srv.url, r.body.token).get('/v1/whoami');
    expectStatus(now, 200);
    assert.equal(now.body.principal.id, 'rotator');
    expectError(await client(srv.url, admin).post(`/v1/tokens/${me.body.tokenId}/rotate`), 409, 'TOKEN_REVOKED');
  });

  test('revocation is immediate and final', async () => {
    const t = await addPrincipal(srv.url, admin, { tenant: T, id: 'revokee', kind: 'tool', domain: 'rev' });
    const c = client(srv.url, t);
    expectStatus(await c.post('/v1/memories', { scope: 'misc', content: 'before revocation' }), 201);
    const id = (await c.get('/v1/whoami')).body.tokenId;
    const r = await client(srv.url, admin).del(`/v1/tokens/${id}`);
    expectStatus(r, 200);
    assert.ok(r.body.revokedAt);
    const refused = await c.post('/v1/memories', { scope: 'misc', content: 'after revocation' });
    expectError(refused, 401, 'UNAUTHENTICATED');
    assert.equal(refused.body.details.reason, 'revoked');
    expectError(await client(srv.url, admin).del(`/v1/tokens/${id}`), 409, 'TOKEN_REVOKED');
    expectError(await client(srv.url, admin).del('/v1/tokens/tok_nope'), 404, 'TOKEN_NOT_FOUND');
    const extra = await client(srv.url, admin).post('/v1/tokens', { tenant: T, principal: 'revokee' });
    expectStatus(extra, 201);
    expectStatus(await client(srv.url, extra.body.token).get('/v1/whoami'), 200);
    expectError(await client(srv.url, admin).post('/v1/tokens', { tenant: T, principal: 'ghost' }), 404, 'UNKNOWN_PRINCIPAL');
  });

  test('a second admin token can be issued and the first rotated', async () => {
    const second = await client(srv.url, admin).post('/v1/tokens', { admin: true });
    expectStatus(second, 201);
    assert.equal(second.body.info.admin, true);
    expectStatus(await client(srv.url, second.body.token).get('/v1/whoami'), 200);
    const revoked = await client(srv.url, second.body.token).del(`/v1/tokens/${second.body.info.id}`);
    expectStatus(revoked, 200);
    expectError(await client(srv.url, second.body.token).get('/v1/whoami'), 401, 'UNAUTHENTICATED');
  });
});

describe('memories, gate and audit', () => {
  const ids: Record<string, string> = {};

  test('write: origin = min(ceiling, source); a claim above the ceiling is 403', async () => {
    const page = await client(srv.url, tok.browser as string).post('/v1/memories', {
      scope: 'vendors',
      content: 'Acme now settles through ACCT-REDIRECT-22.',
      source: 'https://evil.example/acme',
      session: 'w1',
    });
    expectStatus(page, 201);
    assert.equal(page.body.created, true);
    assert.equal(page.body.record.origin.authority, 'external_untrusted');
    assert.equal(page.body.record.origin.principalId, 'browser');
    assert.deepEqual(page.body.record.taint.channels, ['trusted_tool_echo']);
    ids.page = page.body.record.id;
    const rule = await client(srv.url, tok.alice as string).post('/v1/memories', { scope: 'vendors', content: 'Acme is paid to ACCT-ACME-01, net 30.' });
    expectStatus(rule, 201);
    assert.equal(rule.body.record.origin.authority, 'user_confirmed');
    ids.rule = rule.body.record.id;
    const claim = await client(srv.url, tok.browser as string).post('/v1/memories', { scope: 'vendors', content: 'x', authority: 'user_confirmed' });
    expectError(claim, 403, 'AUTHORITY_EXCEEDS_PRINCIPAL');
  });

  test('search marks reads; derive keeps the taint; get and lineage show it', async () => {
    const c = client(srv.url, tok.assistant as string);
    const s = await c.post('/v1/memories/search', { scope: 'vendors', query: 'Acme settles', session: 's2' });
    expectStatus(s, 200);
    assert.ok(s.body.hits.some((h: { record: { id: string } }) => h.record.id === ids.page));
    const note = await c.post('/v1/derivations', { from: [], scope: 'vendors', transform: 'summarize', content: 'Acme payee: ACCT-REDIRECT-22', session: 's2' });
    expectStatus(note, 201);
    assert.equal(note.body.origin.authority, 'model_inferred');
    assert.equal(note.body.taint.lowestAuthority, 'external_untrusted');
    assert.ok(note.body.taint.channels.includes('self_summarization'));
    ids.note = note.body.id;
    const v = await c.get(`/v1/memories/${ids.note}?session=s2`);
    expectStatus(v, 200);
    assert.equal(v.body.actionAuthority, 'external_untrusted');
    const lin = await c.get(`/v1/memories/${ids.note}/lineage`);
    expectStatus(lin, 200);
    assert.ok(lin.body.edges.some((e: { from: string }) => e.from === ids.page));
    // an agent reads only in a session: the unmarked listing and a read without session are refused
    expectError(await c.get('/v1/memories?scope=vendors&limit=10'), 403, 'FORBIDDEN');
    expectError(await c.get(`/v1/memories/${ids.note}`), 400, 'INVALID_ARGUMENT');
    expectError(await c.post('/v1/memories/search', { scope: 'vendors', query: 'Acme' }), 400, 'INVALID_ARGUMENT');
    const list = await client(srv.url, tok.alice as string).get('/v1/memories?scope=vendors&limit=10');
    expectStatus(list, 200);
    assert.ok(list.body.records.length >= 3);
  });

  test('decisions: denied with structured reasons; a scoped confirmation allows it once; replay matches', async () => {
    const action = { type: 'pay', args: { to: 'ACCT-REDIRECT-22', amount: 1200 } };
    const d = await client(srv.url, tok.assistant as string).post('/v1/decisions', { session: 's2', action });
    expectStatus(d, 201);
    assert.equal(d.body.outcome, 'deny');
    assert.ok(d.body.reasons.some((r: { code: string }) => r.code === 'untrusted_origin'));
    ids.denied = d.body.id;
    // only that user (or the admin) can give the user's turn
    expectError(await client(srv.url, tok.assistant as string).post('/v1/decisions', { session: 's2', action, userTurn: { text: 'pay it' } }), 403, 'USER_TURN_NOT_CALLER');
    expectError(await client(srv.url, tok.alice as string).post('/v1/decisions', { session: 's2', action, userTurn: { principal: 'erp', text: 'pay it' } }), 403, 'USER_TURN_NOT_CALLER');
    const withTurn = await client(srv.url, admin).post('/v1/decisions', { tenant: T, session: 's2', action, userTurn: { principal: 'alice', text: 'Pay the Acme invoice of $1200' } });
    expectStatus(withTurn, 201);
    assert.equal(withTurn.body.outcome, 'deny');
    // confirmations: user principals only
    expectError(await client(srv.url, tok.assistant as string).post('/v1/confirmations', { action }), 403, 'CONFIRMATION_REQUIRES_USER');
    const cnf = await client(srv.url, tok.alice as string).post('/v1/confirmations', { action });
    expectStatus(cnf, 201);
    const ok = await client(srv.url, tok.assistant as string).post('/v1/decisions', { session: 's2', action });
    assert.equal(ok.body.outcome, 'allow');
    assert.equal(ok.body.confirmationId, cnf.body.id);
    ids.allowed = ok.body.id;
    const again = await client(srv.url, tok.assistant as string).post('/v1/decisions', { session: 's2', action });
    assert.equal(again.body.outcome, 'deny', 'single-use');
    for (const id of [ids.denied, ids.allowed]) {
      const rp = await client(srv.url, tok.alice as string).get(`/v1/decisions/${id}/replay`);
      expectStatus(rp, 200);
      assert.equal(rp.body.matches, true);
    }
    const one = await client(srv.url, tok.alice as string).get(`/v1/decisions/${ids.denied}`);
    expectStatus(one, 200);
    assert.equal(one.body.outcome, 'deny');
    const list = await client(srv.url, tok.alice as string).get('/v1/decisions?limit=2');
    assert.equal(list.body.decisions.length, 2);
  });

  test('corroborations: recorded always, counted only when independent and trusted', async () => {
    const ext = await client(srv.url, tok.browser as string).post('/v1/corroborations', { recordId: ids.rule, evidence: 'https://acme.example/billing' });
    expectStatus(ext, 201);
    assert.equal(ext.body.counted, false);
    assert.equal(ext.body.rejection, 'below_min_authority');
    const page2 = await client(srv.url, tok.browser as string).post('/v1/memories', { scope: 'vendors', content: 'Globex invoices go to ACCT-GLX-7.', source: 'https://globex.example' });
    const first = await client(srv.url, tok.bank as string).post('/v1/corroborations', { recordId: page2.body.record.id, evidence: 'principal:bank' });
    expectStatus(first, 201);
    assert.equal(first.body.counted, true);
    const second = await client(srv.url, tok.crm as string).post('/v1/corroborations', { recordId: page2.body.record.id, evidence: 'principal:crm' });
    assert.equal(second.body.actionAuthority, 'system_policy');
    expectError(await client(srv.url, tok.bank as string).post('/v1/corroborations', { recordId: 'mem_nope', evidence: 'principal:bank' }), 404, 'RECORD_NOT_FOUND');
  });

  test('delete: a writer deletes its own records, a user any; others are refused', async () => {
    const mine = await client(srv.url, tok.assistant as string).post('/v1/memories', { scope: 'misc', content: 'assistant scratch note' });
    expectError(await client(srv.url, tok.assistant as string).del(`/v1/memories/${ids.rule}`), 403, 'FORBIDDEN');
    const d1 = await client(srv.url, tok.assistant as string).del(`/v1/memories/${mine.body.record.id}`);
    expectStatus(d1, 200);
    assert.equal(d1.body.status, 'deleted');
    assert.equal(d1.body.content, null);
    const d2 = await client(srv.url, tok.alice as string).del(`/v1/memories/${ids.page}?reason=phishing`);
    expectStatus(d2, 200);
    const v = await client(srv.url, tok.alice as string).get(`/v1/memories/${ids.note}`);
    assert.deepEqual(v.body.deletedSources, [ids.page]);
    assert.equal(v.body.taint.lowestAuthority, 'external_untrusted');
  });

  test('audit: verify, export as JSON lines, metrics per tier', async () => {
    const v = await client(srv.url, tok.alice as string).get('/v1/audit/verify');
    expectStatus(v, 200);
    assert.equal(v.body.ok, true, JSON.stringify(v.body));
    const ex = await fetch(`${srv.url}/v1/audit/export`, { headers: { authorization: `Bearer ${tok.alice}` } });
    assert.equal(ex.status, 200);
    assert.match(ex.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const lines = (await ex.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; tenant: string; op: string });
    assert.deepEqual(
      lines.map((e) => e.seq),
      lines.map((_, i) => i + 1),
    );
    assert.ok(lines.every((e) => e.tenant === T));
    assert.ok(lines.some((e) => e.op === 'decide'));
    const m = await client(srv.url, tok.alice as string).get('/v1/metrics?replaySample=all');
    expectStatus(m, 200);
    const high = m.body.tiers.high;
    assert.ok(high.decisions >= 4);
    assert.equal(high.decisionReplayRate.numerator, high.decisionReplayRate.denominator);
    assert.equal(high.decisionReplayRate.denominator, high.decisions);
    // every exposed high decision that proceeded did so through a confirmation: ASR 0
    assert.equal(high.launderingAsr.numerator, 0);
    assert.ok(high.launderingAsr.denominator >= 3);
    assert.equal(high.launderingAsr.byChannel.self_summarization.denominator >= 1, true);
    assert.equal(high.originCoverage.value, 1);
    assert.equal(high.taintRetention.value, 1);
    assert.ok(high.highRiskDependencyRate.value > 0);
    assert.equal(m.body.tiers.low.decisions, 0);
    assert.equal(m.body.tiers.low.launderingAsr.value, null);
    // the browser's corroboration of alice's rule (read in s2, so in the high bucket) does not count
    assert.equal(high.corroborationValidity.numerator, 0);
    assert.deepEqual(high.corroborationValidity.rejected, { below_min_authority: 1 });
    // the bank's and the crm's corroborations of the Globex page (no decision used it) both count
    assert.equal(m.body.unused.corroborationValidity.numerator, 2);
    assert.equal(m.body.unused.corroborationValidity.denominator, 2);
  });
});

describe('review queue: who may reject', () => {
  test('an agent is refused with a message naming who may reject; a system principal may', async () => {
    const a = client(srv.url, tok.assistant as string);
    const d = await a.post('/v1/decisions', { action: { type: 'pay', args: { to: 'ACCT-REVIEW-1', amount: 5 } } });
    expectStatus(d, 201);
    assert.equal(d.body.outcome, 'deny');
    const refused = await a.post(`/v1/review/${d.body.id}/reject`, { note: 'no' });
    expectError(refused, 403, 'FORBIDDEN');
    assert.equal(refused.body.message, 'an agent principal cannot reject a queued decision; only the admin, a user or a system principal can');
    expectStatus(await client(srv.url, tok.erp as string).post(`/v1/review/${d.body.id}/reject`, { note: 'not ours' }), 201);
  });
});

describe('bad input stores nothing', () => {
  async function counts(): Promise<{ records: number; audit: number }> {
    const rec = await client(srv.url, admin).get(`/v1/memories?tenant=${T}&includeDeleted=true&limit=10000`);
    const ex = await fetch(`${srv.url}/v1/audit/export?tenant=${T}`, { headers: { authorization: `Bearer ${admin}` } });
    return { records: rec.body.records.length, audit: (await ex.text()).trim().split('\n').length };
  }

  test('bad JSON, unknown fields, wrong types, missing fields or tenant, too large: 4xx with a code', async () => {
    const before = await counts();
    const b = tok.browser as string;
    const cases: Array<[() => Promise<Res>, number, string]> = [
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, raw: '{"scope": "x", "content": ' }), 400, 'INVALID_JSON'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, raw: '' }), 400, 'INVALID_JSON'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, raw: '{"__proto__": {"x": 1}, "scope": "s", "content": "c"}' }), 400, 'INVALID_JSON'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, body: { scope: 'x', content: 'c', extra: true } }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, body: { scope: 'x', content: 42 } }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, body: { content: 'no scope' } }), 400, 'SCOPE_REQUIRED'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, body: { scope: 'x', content: '' } }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, body: { scope: 'x', content: 'c', authority: 'root' } }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, body: [1, 2] }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, raw: 'scope=x', contentType: 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, body: { scope: 'x', content: 'y'.repeat(2001) } }), 413, 'CONTENT_TOO_LONG'],
      [() => http(srv.url, 'POST', '/v1/memories', { token: b, body: { scope: 'x', content: 'z'.repeat(70 * 1024) } }), 413, 'BODY_TOO_LARGE'],
      [() => http(srv.url, 'POST', '/v1/derivations', { token: b, body: { from: 'mem_x', content: 'c', transform: 'summarize' } }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'POST', '/v1/derivations', { token: b, body: { from: [], content: 'c', transform: 'paraphrase' } }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'POST', '/v1/decisions', { token: b, body: { action: { type: 'pay', args: 'x' } } }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'POST', '/v1/decisions', { token: admin, body: { action: { type: 'pay', args: {} } } }), 400, 'TENANT_REQUIRED'],
      [() => http(srv.url, 'POST', '/v1/principals', { token: admin, body: { id: 'p', kind: 'user', domain: 'd' } }), 400, 'TENANT_REQUIRED'],
      [() => http(srv.url, 'POST', '/v1/principals', { token: admin, body: { tenant: T, id: 'p', kind: 'root', domain: 'd' } }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'POST', '/v1/principals', { token: admin, body: { tenant: T, id: 'alice', kind: 'user', domain: 'd' } }), 409, 'PRINCIPAL_EXISTS'],
      [() => http(srv.url, 'POST', '/v1/principals', { token: admin, body: { tenant: T, id: 'p2', kind: 'agent', domain: 'd', maxAuthority: 'system_policy' } }), 403, 'AUTHORITY_EXCEEDS_PRINCIPAL'],
      [() => http(srv.url, 'GET', '/v1/memories?limit=abc', { token: b }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'GET', '/v1/memories?bogus=1', { token: b }), 400, 'INVALID_ARGUMENT'],
      [() => http(srv.url, 'GET', '/v1/memories/mem_missing?session=bad-input', { token: b }), 404, 'RECORD_NOT_FOUND'],
      [() => http(srv.url, 'GET', '/v1/decisions/dec_missing/replay', { token: b }), 404, 'DECISION_NOT_FOUND'],
    ];
    for (const [p, status, code] of cases) expectError(await p(), status, code);
    const afterCounts = await counts();
    assert.equal(afterCounts.records, before.records, 'no record stored');
    // refusals the library logs on purpose (AUTHORITY_EXCEEDS_PRINCIPAL) append a `refused` audit entry; nothing else does
    assert.ok(afterCounts.audit - before.audit <= 1, `audit grew by ${afterCounts.audit - before.audit}`);
    const principals = await client(srv.url, admin).get(`/v1/principals?tenant=${T}`);
    assert.ok(!principals.body.principals.some((p: { id: string }) => p.id === 'p' || p.id === 'p2'));
  });
});
