/** An in-process server on loopback over a fresh store, with principals in two tenants. */
import { join } from 'node:path';
import { type RunningServer, startServer } from '../src/server/index.js';
import { http } from '../test/server-helpers.js';
import { REL_POLICY, rmDir, tempDir } from './common.js';

export interface Cast {
  readonly srv: RunningServer;
  readonly dir: string;
  readonly db: string;
  readonly admin: string;
  /** tokens by `${tenant}/${principal}` */
  readonly tok: Record<string, string>;
  close(): Promise<void>;
}

export const CAST: ReadonlyArray<readonly [string, string, string]> = [
  ['alice', 'user', 'alice'],
  ['agent', 'agent', 'agent'],
  ['browser', 'tool', 'browser.vendor'],
  ['bank', 'tool', 'bank.example'],
  ['registry', 'tool', 'registry.example'],
  ['mallory', 'external', 'mallory.example'],
  ['pipeline', 'system', 'pipeline'],
];

export async function startCast(tenants: readonly string[] = ['acme', 'globex'], config: Record<string, unknown> = {}): Promise<Cast> {
  const dir = tempDir();
  const db = join(dir, 'memauth.db');
  const srv = await startServer({ config: { db, port: 0, host: '127.0.0.1', logLevel: 'silent', policy: REL_POLICY as never, ...config } });
  const admin = srv.adminToken?.token as string;
  const tok: Record<string, string> = {};
  for (const t of tenants)
    for (const [id, kind, domain] of CAST) {
      const r = await http(srv.url, 'POST', '/v1/principals', { token: admin, body: { tenant: t, id, kind, domain } });
      if (r.status !== 201) throw new Error(`register ${t}/${id}: ${r.status} ${r.text}`);
      tok[`${t}/${id}`] = r.body.token.token as string;
    }
  return {
    srv,
    dir,
    db,
    admin,
    tok,
    close: async () => {
      await srv.close();
      rmDir(dir);
    },
  };
}
