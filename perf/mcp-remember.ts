/**
 * Benchmark (prints, asserts nothing on time): `remember` latency over `memauth mcp` (stdio) on a
 * SQLite file — 200 writes one after another (each result awaited), then 200 sent at once.
 * Issue 16, finding 4: the stdio server opens SQLite like `memauth serve` does.
 *
 * Usage: node dist/perf/mcp-remember.js [--writes N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { openMemory } from '../src/api/open.js';
import { TokenService } from '../src/server/tokens.js';
import { fmtNs, nowNs, summarize } from './stats.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

async function main(): Promise<void> {
  const i = process.argv.indexOf('--writes');
  const n = i >= 0 ? Number(process.argv[i + 1]) : 200;
  const dir = mkdtempSync(join(tmpdir(), 'memauth-mcp-perf-'));
  const db = join(dir, 'mcp.db');
  const mem = await openMemory({ path: db });
  await mem.registerPrincipal({ tenant: 'perf', id: 'agent', kind: 'agent', domain: 'agent' });
  const { token } = await new TokenService(mem.driver).issue({ tenant: 'perf', principal: 'agent' });
  await mem.close();
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, '--db', db, 'mcp'], env: { ...(process.env as Record<string, string>), MEMAUTH_TOKEN: token }, stderr: 'pipe' });
  const client = new Client({ name: 'memauth-perf', version: '1.0.0' });
  await client.connect(transport);
  try {
    const lat: number[] = [];
    for (let k = 0; k < n; k++) {
      const t0 = nowNs();
      await client.callTool({ name: 'remember', arguments: { scope: 'notes', content: `note ${k}` } });
      lat.push(Number(nowNs() - t0));
    }
    const s = summarize(lat);
    process.stdout.write(`mcp remember, ${n} sequential: p50 ${fmtNs(s.p50)}  p99 ${fmtNs(s.p99)}  total ${fmtNs(lat.reduce((a, b) => a + b, 0))}\n`);
    const t0 = nowNs();
    await Promise.all(Array.from({ length: n }, (_, k) => client.callTool({ name: 'remember', arguments: { scope: 'notes', content: `burst ${k}` } })));
    const total = Number(nowNs() - t0);
    process.stdout.write(`mcp remember, ${n} at once: total ${fmtNs(total)}  (${fmtNs(total / n)} per write)\n`);
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
