/**
 * The machine a performance run is measured on (CPU, cores, RAM, Node, SQLite, OS, load average),
 * printed with every figure of the perf scripts. May import: src/store/sqlite/driver.ts.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { SqliteDriver } from '../src/store/sqlite/driver.js';

/** The CPU model from /proc/cpuinfo (Linux), else Node's. */
export function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m?.[1]) return m[1].trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? 'unknown';
}

/** The machine's description, with the load average now (`loadavgAtStart`). */
export function machine(): Record<string, unknown> {
  const db = SqliteDriver.open({ path: ':memory:' });
  const sqlite = String((db.unsafeDatabase().prepare('SELECT sqlite_version() AS v').get() as { v: unknown }).v);
  void db.close();
  return {
    cpu: cpuModel(),
    nproc: availableParallelism(),
    ramGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    sqlite,
    os: `${process.platform} ${release()}`,
    loadavgAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

/** One line: `machine: <cpu>, N cores, X GiB RAM, Node v…, SQLite …, <os>; load average a b c`. */
export function machineLine(m: Record<string, unknown> = machine()): string {
  return `machine: ${String(m.cpu)}, ${String(m.nproc)} cores, ${String(m.ramGiB)} GiB RAM, Node ${String(m.node)}, SQLite ${String(m.sqlite)}, ${String(m.os)}; load average ${(m.loadavgAtStart as number[]).join(' ')}`;
}
