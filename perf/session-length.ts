/**
 * Benchmark (prints, asserts nothing on time): the cost of the n-th write in ONE session, for
 * n = 1..N (default 10,000), on a SQLite file with group commit (as `memauth mcp` opens it) — an
 * agent writing in the session it reads, so each write takes the whole session as its context —
 * and the database's bytes per record against an ungated baseline (plain better-sqlite3 INSERTs of
 * the same texts, in the same process). Also the SQL statements one write runs at k = 1 and
 * k = 1,000 (counted on better-sqlite3's Statement). Goal: last-100 / first-100 mean ≤ 1.2;
 * bytes per record ≤ 2× the baseline's. Also, in the same process, the same writes by the same
 * agent with no session (no context, no read log): mean time per write and bytes per record.
 * Both after {@link WARM_UP} writes on throwaway stores (JIT warm-up). Then the cost of a decision at a position of the session:
 * after each of the first 100 and the last 100 writes, one `authorize` in the session (a `high`
 * action, so every record the session read is a context dependency), and its statements.
 *
 * Usage: node dist/perf/session-length.js [--n N] [--dir DIR] [--no-decisions]
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openMemory } from '../src/api/open.js';
import { createProgress } from '../src/cli/progress.js';
import { nowNs } from './stats.js';

const TENANT = 'perf';
/** Writes made on throwaway stores before the measured ones, in a session and without. */
const WARM_UP = 300;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** Statements run so far through better-sqlite3 (run/get/all/iterate of any prepared statement). */
const statements = { n: 0 };
function countStatements(): void {
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  for (const m of ['run', 'get', 'all', 'iterate']) {
    const orig = proto[m] as (...a: unknown[]) => unknown;
    proto[m] = function counted(this: unknown, ...a: unknown[]): unknown {
      statements.n += 1;
      return orig.apply(this, a);
    };
  }
  probe.close();
}

/** Bytes of a SQLite file and its WAL. */
const bytesOf = (path: string): number => [path, `${path}-wal`].reduce((s, p) => s + (existsSync(p) ? statSync(p).size : 0), 0);

const text = (i: number): string => `note ${i}: the customer asked about invoice ${i * 7} and the vendor v${i % 97} schedule`;

/** The ungated baseline: the same texts as plain rows, one INSERT each; its bytes per record. */
function baselineBytes(dir: string, n: number): number {
  const path = join(dir, 'baseline.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE notes (id TEXT PRIMARY KEY, content TEXT NOT NULL)');
  const ins = db.prepare('INSERT INTO notes (id, content) VALUES (?, ?)');
  for (let i = 0; i < n; i++) ins.run(`mem_${String(i).padStart(32, '0')}`, text(i));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return bytesOf(path) / n;
}

const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);

/** The database's bytes per record after checkpointing its WAL (the memory closed). */
function checkpointedBytes(path: string, n: number): number {
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return bytesOf(path) / n;
}

/** The same `n` agent writes in `session` (none: no context, no log) on a new store at `path`: mean ms per write and bytes per record. */
async function plainRun(path: string, n: number, session?: string): Promise<{ ms: number; bytes: number }> {
  const mem = await openMemory({ path, groupCommit: true, checkpointKey: false });
  await mem.registerPrincipal({ tenant: TENANT, id: 'agent', kind: 'agent', domain: 'agent.example' });
  const t0 = nowNs();
  for (let k = 1; k <= n; k++) await mem.write({ tenant: TENANT, scope: 'notes', principal: 'agent', content: text(k), ...(session === undefined ? {} : { session }) });
  const ms = Number(nowNs() - t0) / 1e6 / n;
  await mem.close();
  return { ms, bytes: checkpointedBytes(path, n) };
}

async function main(): Promise<void> {
  const n = Number(arg('--n', '10000'));
  const dir = arg('--dir', mkdtempSync(join(tmpdir(), 'memauth-session-length-')));
  const path = join(dir, 'memauth.db');
  countStatements();
  // warm up (the JIT) on a throwaway store, so that the first 100 writes measured are not the first compiled
  await plainRun(join(dir, 'warm-up.db'), WARM_UP, 'warm-up');
  await plainRun(join(dir, 'warm-up-2.db'), WARM_UP);
  const mem = await openMemory({ path, groupCommit: true, checkpointKey: false });
  await mem.registerPrincipal({ tenant: TENANT, id: 'agent', kind: 'agent', domain: 'agent.example' });
  const session = mem.newSessionId();
  const lat: number[] = [];
  const perWrite = new Map<number, number>();
  const decisions = !process.argv.includes('--no-decisions');
  const decideLat: Array<{ k: number; ms: number }> = [];
  const perDecision = new Map<number, number>();
  const progress = createProgress(process.stderr, 'session-length');
  for (let k = 1; k <= n; k++) {
    const s0 = statements.n;
    const t0 = nowNs();
    await mem.write({ tenant: TENANT, scope: 'notes', principal: 'agent', content: text(k), session });
    lat.push(Number(nowNs() - t0) / 1e6);
    if (k === 1 || k === 1000) perWrite.set(k, statements.n - s0);
    if (decisions && (k <= 100 || k > n - 100)) {
      const d0 = statements.n;
      const t1 = nowNs();
      await mem.authorize({ tenant: TENANT, session, action: { type: 'send_email', args: { to: 'ops@example.com', body: `status ${k}` } } });
      decideLat.push({ k, ms: Number(nowNs() - t1) / 1e6 });
      if (k === 1 || k === n) perDecision.set(k, statements.n - d0);
    }
    progress.update(k, n, `write ${k}`);
  }
  progress.finish();
  await mem.close();
  const bytes = checkpointedBytes(path, n);
  const base = baselineBytes(dir, n);
  const plain = await plainRun(join(dir, 'no-session.db'), n);
  const first = mean(lat.slice(0, 100));
  const last = mean(lat.slice(-100));
  const row = (a: string, b: string, c: string): string => `| ${a.padEnd(44)} | ${b.padStart(12)} | ${c.padStart(12)} |\n`;
  process.stdout.write(`one session, ${n} agent writes (SQLite, group commit; ${path})\n`);
  process.stdout.write(row('measure', 'value', 'goal'));
  process.stdout.write(row('-'.repeat(44), '-'.repeat(12), '-'.repeat(12)));
  process.stdout.write(row('write, first 100 (mean ms)', first.toFixed(3), ''));
  process.stdout.write(row(`write, last 100 (writes ${n - 99}..${n}) (mean ms)`, last.toFixed(3), ''));
  process.stdout.write(row('ratio last / first', (last / first).toFixed(2), '≤ 1.2'));
  process.stdout.write(row('bytes per record, memauth', bytes.toFixed(0), ''));
  process.stdout.write(row('bytes per record, plain INSERT baseline', base.toFixed(0), ''));
  process.stdout.write(row('ratio memauth / baseline', (bytes / base).toFixed(2), '≤ 2'));
  process.stdout.write(row('write, all, in the session (mean ms)', mean(lat).toFixed(3), ''));
  process.stdout.write(row('write, all, the same with no session (mean ms)', plain.ms.toFixed(3), ''));
  process.stdout.write(row('ratio in the session / no session', (mean(lat) / plain.ms).toFixed(2), ''));
  process.stdout.write(row('bytes per record, memauth with no session', plain.bytes.toFixed(0), ''));
  process.stdout.write(row('ratio in the session / no session', (bytes / plain.bytes).toFixed(2), ''));
  for (const [k, c] of perWrite) process.stdout.write(row(`SQL statements, write k = ${k}`, String(c), ''));
  if (decisions) {
    const dFirst = mean(decideLat.filter((d) => d.k <= 100).map((d) => d.ms));
    const dLast = mean(decideLat.filter((d) => d.k > Math.max(100, n - 100)).map((d) => d.ms));
    process.stdout.write(row('decision after write 1..100 (mean ms)', dFirst.toFixed(3), ''));
    process.stdout.write(row(`decision after write ${n - 99}..${n} (mean ms)`, dLast.toFixed(3), ''));
    process.stdout.write(row('ratio last / first', (dLast / dFirst).toFixed(2), ''));
    for (const [k, c] of perDecision) process.stdout.write(row(`SQL statements, decision at k = ${k}`, String(c), ''));
  }
  if (arg('--dir', '') === '') rmSync(dir, { recursive: true, force: true });
}

await main();
