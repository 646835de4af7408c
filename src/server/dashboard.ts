/**
 * The web dashboard: plain ES modules and CSS from the top-level `dashboard/` folder, served as
 * they are (no build step), plus the graph library (cytoscape's ESM build) from node_modules.
 * Every response carries a strict Content-Security-Policy (scripts, styles, data only from this
 * server; no inline scripts; no framing). The pages call the /v1 API with the bearer token the
 * person pastes at sign-in; nothing here authenticates or reads data itself.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/** The Content-Security-Policy of every dashboard response. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'; object-src 'none'";

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** Where the dashboard's files are: `<package>/dashboard` (this file is dist/src/server/dashboard.js or src/server/dashboard.ts). */
export function dashboardDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../../../dashboard', '../../dashboard']) {
    const d = join(here, up);
    try {
      if (statSync(join(d, 'index.html')).isFile()) return d;
    } catch {
      // try the next layout
    }
  }
  throw new Error('memauth: the dashboard/ folder is missing from the package');
}

function cytoscapeFile(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('cytoscape')), 'cytoscape.esm.min.mjs');
}

interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

/** Load the dashboard's files once (a fixed set: no path from the request reaches the file system). */
function loadAssets(): Map<string, Asset> {
  const dir = dashboardDir();
  const assets = new Map<string, Asset>();
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel))) {
      const r = rel === '' ? name : `${rel}/${name}`;
      const full = join(dir, r);
      if (statSync(full).isDirectory()) walk(r);
      else if (TYPES[extname(name)]) assets.set(`/dashboard/${r}`, { body: readFileSync(full), type: TYPES[extname(name)] as string });
    }
  };
  walk('');
  assets.set('/dashboard/vendor/cytoscape.esm.min.mjs', { body: readFileSync(cytoscapeFile()), type: TYPES['.mjs'] as string });
  return assets;
}

/** Register `GET /` (the dashboard page) and `GET /dashboard/*` (its modules, styles and the graph library). */
export function registerDashboard(app: FastifyInstance): void {
  let assets: Map<string, Asset> | null = null;
  const get = (path: string): Asset | undefined => {
    assets ??= loadAssets();
    return assets.get(path);
  };
  const headers = {
    'content-security-policy': DASHBOARD_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cache-control': 'no-cache',
    'cross-origin-opener-policy': 'same-origin',
  };
  app.get('/', async (_req, reply) => {
    const a = get('/dashboard/index.html') as Asset;
    return reply.headers(headers).type(a.type).send(a.body);
  });
  app.get('/dashboard/*', async (req, reply) => {
    const a = get(req.url.split('?')[0] as string);
    if (!a) return reply.code(404).headers(headers).type('application/json; charset=utf-8').send({ code: 'NOT_FOUND', message: 'no such dashboard file', details: {} });
    return reply.headers(headers).type(a.type).send(a.body);
  });
}
