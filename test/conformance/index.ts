/**
 * memauth's storage conformance suite (STYLE.md: one shared suite, like Hono's routers). Every
 * driver runs every case unchanged — authority, taint, corroboration, confirmation, gate, audit
 * and tamper detection, deletion, tenancy, search, triggers, concurrency — through a
 * {@link StoreFactory} that opens a fresh store and a small driver-specific raw handle.
 *
 * @example
 * ```ts
 * runConformance(sqliteStore);        // test/sqlite.test.ts (read cache on)
 * runConformance(sqliteNoCacheStore); // test/sqlite-nocache.test.ts (read cache off)
 * runConformance(postgresStore(pg));  // test/postgres.test.ts
 * ```
 */
import { describe } from 'node:test';
import type { StoreFactory } from './common.js';
import { audit } from './audit.js';
import { exposure } from './exposure.js';
import { observables } from './observables.js';
import { identity } from './identity.js';
import { contentHash } from './content-hash.js';
import { decisionSize } from './decision-size.js';
import { drifts } from './drifts.js';
import { echoCases } from './echoes.js';
import { properties } from './properties.js';
import { regressions } from './regressions.js';
import { requesters } from './requesters.js';
import { reviewQueue } from './review-queue.js';
import { searchBudget } from './search-budget.js';
import { searchRanking } from './search-ranking.js';
import { store } from './store.js';
import { surfaces } from './surfaces.js';
import { triggers } from './triggers.js';
import { valueCases } from './values.js';
import { vectors } from './vectors.js';
import { versionCases } from './versions.js';

export type { StoreFactory } from './common.js';

/** Register every conformance case for the factory's store, grouped under its name. */
export function runConformance(f: StoreFactory): void {
  describe(`[${f.name}] regressions`, () => regressions(f));
  describe(`[${f.name}] store: search and concurrency`, () => store(f));
  describe(`[${f.name}] audit`, () => audit(f));
  describe(`[${f.name}] decision size`, () => decisionSize(f));
  describe(`[${f.name}] identity: principals and tokens in the chain`, () => identity(f));
  describe(`[${f.name}] triggers`, () => triggers(f));
  describe(`[${f.name}] properties`, () => properties(f));
  describe(`[${f.name}] exposure: what the model sees`, () => exposure(f));
  describe(`[${f.name}] cross-tenant observables`, () => observables(f));
  describe(`[${f.name}] value provenance`, () => valueCases(f));
  describe(`[${f.name}] requesters and session owners`, () => requesters(f));
  describe(`[${f.name}] review queue: lanes and keyset pages`, () => reviewQueue(f));
  describe(`[${f.name}] keyed content hashes`, () => contentHash(f));
  describe(`[${f.name}] search ranking against a reference`, () => searchRanking(f));
  describe(`[${f.name}] search: the bound on ranked matches`, () => searchBudget(f));
  describe(`[${f.name}] write-surface inventory: rule matching in SQL, bounded counts`, () => surfaces(f));
  describe(`[${f.name}] drivers agree: each statement written once`, () => drifts(f));
  describe(`[${f.name}] semantic and hybrid search`, () => vectors(f));
  describe(`[${f.name}] versions: supersede without suppression`, () => versionCases(f));
  describe(`[${f.name}] echoes of a session's reads, looked up`, () => echoCases(f));
}
