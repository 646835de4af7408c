/**
 * The whole conformance suite (test/conformance/) on real SQLite files with the facade's read
 * cache off (src/store/cache.ts): every case must hold on the driver alone, as on
 * test/sqlite.test.ts (cache on) and test/postgres.test.ts.
 */
import { runConformance } from './conformance/index.js';
import { sqliteNoCacheStore } from './support/stores.js';

runConformance(sqliteNoCacheStore);
