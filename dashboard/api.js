// The /v1 API with the bearer token the person pasted (kept in sessionStorage only).
const KEY_TOKEN = 'memauth.token';
const KEY_TENANT = 'memauth.tenant';

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? `${body.code}: ${body.message}` : `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? 'HTTP_' + status;
    this.body = body;
  }
}

export const session = {
  get token() {
    return sessionStorage.getItem(KEY_TOKEN);
  },
  get tenant() {
    return sessionStorage.getItem(KEY_TENANT);
  },
  /** who the token is: set at sign-in from /v1/whoami. */
  who: null,
  save(token, tenant) {
    sessionStorage.setItem(KEY_TOKEN, token);
    if (tenant) sessionStorage.setItem(KEY_TENANT, tenant);
    else sessionStorage.removeItem(KEY_TENANT);
  },
  clear() {
    sessionStorage.removeItem(KEY_TOKEN);
    sessionStorage.removeItem(KEY_TENANT);
    this.who = null;
  },
};

async function request(method, path, { query, body, token, raw } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  const headers = { authorization: `Bearer ${token ?? session.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (raw && r.ok) return r;
  const text = await r.text();
  let parsed = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!r.ok) throw new ApiError(r.status, parsed);
  return parsed;
}

/** The tenant of the session: a principal token fixes it; the admin picked one. */
const tq = (q = {}) => (session.who && session.who.admin ? { ...q, tenant: session.tenant } : q);
const tb = (b = {}) => (session.who && session.who.admin ? { ...b, tenant: session.tenant } : b);

export const api = {
  whoami: (token) => request('GET', '/v1/whoami', { token }),
  policy: () => request('GET', '/v1/policy'),
  principals: () => request('GET', '/v1/principals', { query: tq() }),
  memories: (q) => request('GET', '/v1/memories', { query: tq(q) }),
  memory: (id) => request('GET', `/v1/memories/${encodeURIComponent(id)}`, { query: tq({ exact: 'true' }) }),
  lineage: (id) => request('GET', `/v1/memories/${encodeURIComponent(id)}/lineage`, { query: tq() }),
  decisions: (q) => request('GET', '/v1/decisions', { query: tq(q) }),
  decision: (id) => request('GET', `/v1/decisions/${encodeURIComponent(id)}`, { query: tq() }),
  replay: (id) => request('GET', `/v1/decisions/${encodeURIComponent(id)}/replay`, { query: tq() }),
  review: (q = {}) => request('GET', '/v1/review', { query: tq(q) }),
  approve: (id, expiresInSeconds) => request('POST', `/v1/review/${encodeURIComponent(id)}/approve`, { body: tb({ expiresInSeconds }) }),
  reject: (id, note) => request('POST', `/v1/review/${encodeURIComponent(id)}/reject`, { body: tb({ note }) }),
  confirm: (body) => request('POST', '/v1/confirmations', { body: tb(body) }),
  metrics: () => request('GET', '/v1/metrics', { query: tq({ replaySample: 20 }) }),
  metricsSeries: (buckets) => request('GET', '/v1/metrics/series', { query: tq({ buckets }) }),
  surfaces: (since) => request('GET', '/v1/surfaces', { query: tq({ since }) }),
  verify: () => request('GET', '/v1/audit/verify', { query: tq() }),
  exportAudit: (after) => request('GET', '/v1/audit/export', { query: tq({ after }), raw: true }),
};
