/**
 * src/server/next-run.ts (the HTTP path's authentication coalescing): callers share a run only
 * if it starts after they called — a caller never gets an answer read before it arrived (a token
 * revoked before a request arrives must be refused) — and every joined caller gets the same
 * result or error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NextRun } from '../src/server/next-run.js';

/** A read of `state.value` that completes when the test says so. */
function gatedRead(state: { value: number }) {
  const gates: Array<() => void> = [];
  let runs = 0;
  const fn = async (): Promise<number> => {
    runs++;
    const seen = state.value;
    await new Promise<void>((r) => gates.push(r));
    return seen;
  };
  const open = async (): Promise<void> => {
    while (gates.length === 0) await new Promise((r) => setImmediate(r));
    (gates.shift() as () => void)();
  };
  return { fn, open, runs: () => runs };
}

test('callers during a run share the next run, which starts after all of them called', async () => {
  const state = { value: 1 };
  const nr = new NextRun<string, number>();
  const g = gatedRead(state);
  const first = nr.run('k', g.fn);
  await new Promise((r) => setImmediate(r)); // the first run has started and read 1
  state.value = 2; // e.g. the token is revoked now
  const later = Array.from({ length: 10 }, () => nr.run('k', g.fn));
  await g.open();
  assert.equal(await first, 1);
  await g.open();
  assert.deepEqual(await Promise.all(later), Array(10).fill(2), 'no caller that arrived after the change sees the old value');
  assert.equal(g.runs(), 2, 'ten callers shared one run');
});

test('keys do not share; an error reaches every joined caller; the next call runs again', async () => {
  const nr = new NextRun<string, number>();
  let calls = 0;
  const fail = async (): Promise<number> => {
    calls++;
    await new Promise((r) => setImmediate(r));
    throw new Error('unknown bearer token');
  };
  const joined = [nr.run('a', fail), nr.run('a', fail), nr.run('b', fail)];
  const settled = await Promise.allSettled(joined);
  assert.ok(settled.every((s) => s.status === 'rejected' && /unknown bearer token/.test(String(s.reason))));
  assert.equal(calls, 2, "'a' twice joined one run, 'b' ran its own");
  await assert.rejects(nr.run('a', fail));
  assert.equal(calls, 3);
});
