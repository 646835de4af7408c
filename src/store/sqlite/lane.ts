/**
 * The per-file write lane of the SQLite driver (see {@link FileLane}).
 */
import fs from 'node:fs';
import { MemauthError } from '../../core/errors.js';

/**
 * The write lane of one database file in this process: every {@link SqliteDriver} open on the
 * file takes it around each of its transactions (and group-commit batches and exports).
 *
 * Why: better-sqlite3 is synchronous. When two connections of one process share a file and the
 * first holds SQLite's write lock across an `await` (every memauth transaction does), the
 * second's `BEGIN IMMEDIATE` waits out `busy_timeout` by blocking the only thread — the first can
 * never reach its COMMIT, and the second fails with `DATABASE_LOCKED`. Queuing in the event loop
 * instead lets the first finish. Other processes still meet at SQLite's lock (`busy_timeout`).
 */
export class FileLane {
  private tail: Promise<void> = Promise.resolve();
  /** drivers using this lane (the lane is forgotten when the last one closes). */
  users = 0;

  constructor(readonly key: string) {}

  /**
   * Wait for the lane; resolves to the function that releases it (call it exactly once).
   * @throws MemauthError `DATABASE_LOCKED` after `timeoutMs` of waiting (as SQLite's busy_timeout
   *   would: another transaction on this file in this process held the lane that long — or the
   *   caller is inside one, waiting for itself).
   */
  acquire(timeoutMs: number, path: string): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const prev = this.tail;
    this.tail = prev.then(() => held);
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        reject(
          new MemauthError(
            'DATABASE_LOCKED',
            `${path} is locked by another transaction of this process (waited ${timeoutMs} ms); retry, or do not open a transaction on one memauth store from inside a transaction on another store over the same file`,
            { path },
          ),
        );
      }, timeoutMs);
      void prev.then(() => {
        // a waiter that gave up passes its turn on at once
        if (timedOut) release();
        else {
          clearTimeout(timer);
          resolve(release);
        }
      });
    });
  }
}

const LANES = new Map<string, FileLane>();

/**
 * The lane of `path` (by its real path, so `./a.db` and `/x/a.db` share one), registered for one
 * more user. `:memory:` and other non-files get a lane of their own (nothing else can open them).
 */
export function joinLane(path: string): FileLane {
  let key: string;
  try {
    key = path === ':memory:' || path === '' ? '' : fs.realpathSync(path);
  } catch {
    key = '';
  }
  if (key === '') {
    const own = new FileLane('');
    own.users = 1;
    return own;
  }
  let lane = LANES.get(key);
  if (!lane) {
    lane = new FileLane(key);
    LANES.set(key, lane);
  }
  lane.users += 1;
  return lane;
}

/** One user of `lane` is done with it (its driver closed). */
export function leaveLane(lane: FileLane): void {
  lane.users -= 1;
  if (lane.users <= 0 && LANES.get(lane.key) === lane) LANES.delete(lane.key);
}
