/**
 * Audit verification over a store whose session read logs hold many rows (src/api/verify.ts,
 * verify-sessions.ts) lets the event loop run while it works: the server runs every tenant on one
 * loop, and a tool token may start the check (GET /v1/audit/verify, MCP verify_audit). The longest
 * stall is measured with a `setImmediate` ticker running beside the check, on a real SQLite file.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { extendLog } from '../src/core/session.js';
import type { MemoryRecord } from '../src/core/types.js';
import { type Env, setup, T, P } from './helpers.js';

// 150 rows a session: sessions straddle the pages the check reads
const RECORDS = 150;
const SESSIONS = 400;

let env: Env;

before(async () => {
  env = await setup();
  const recs: MemoryRecord[] = [];
  for (let i = 0; i < RECORDS; i++) recs.push((await env.mem.write({ tenant: T, scope: 'lin', content: `step ${i} of the runbook`, principal: P.alice, requester: P.alice })).record);
  // what a tool's search of every record in a fresh session each time stores (api/sessions.ts), 60,000 rows
  // in all, appended directly: through the API this takes minutes
  const entries = extendLog(null, recs);
  const at = new Date().toISOString();
  await env.mem.driver.transaction(T, async (tx) => {
    for (let s = 0; s < SESSIONS; s++) {
      await tx.ensureSession(T, `flood-${s}`, at, P.browser);
      await tx.appendSessionLog(T, `flood-${s}`, entries, at);
    }
  });
});

after(async () => {
  await env.dispose();
});

test('one verification of 60,000 session-log rows lets the event loop run: many turns, none held over 500 ms; the verdict is unchanged', async () => {
  let turns = 0;
  let longest = 0;
  let last = performance.now();
  let running = true;
  const tick = (): void => {
    const t = performance.now();
    longest = Math.max(longest, t - last);
    last = t;
    turns += 1;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const report = await env.mem.verifyAudit({ tenant: T });
  running = false;
  // the gap up to the verification's end counts too
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(report.ok, true, report.tenants[0]?.message);
  // a check that never yields lets no turn run until it ends (turns 0 or 1, and one gap as long as the whole check: seconds here)
  assert.ok(turns >= 20, `the event loop ran only ${turns} times during the verification`);
  assert.ok(longest < 500, `the event loop was held ${longest.toFixed(0)} ms at once`);
});

test('a session log entry changed outside the API is still found among the rows', async () => {
  env.db.exec('DROP TRIGGER session_log_no_update');
  env.db.prepare("UPDATE session_log SET hash = 'forged' WHERE tenant = ? AND session_id = 'flood-150' AND ord = 7").run(T);
  const report = await env.mem.verifyAudit({ tenant: T });
  assert.equal(report.ok, false);
  assert.deepEqual(
    report.tenants[0]?.records.bad.filter((b) => b.problem === 'session_log_entry_differs').map((b) => b.id),
    ['session:flood-150#7'],
  );
});
