/**
 * The two store factories the conformance suite runs against (test/conformance/): a real SQLite
 * file in a temp directory, and a fresh schema in a real PostgreSQL database. Each gives the
 * memory and a small driver-specific {@link Raw} handle for the tamper and trigger cases.
 */
import fs from 'node:fs';
import path from 'node:path';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Embedder, type Memory, type PolicyInput, SqliteDriver, openMemory } from '../../src/index.js';
import { PostgresDriver } from '../../src/store/postgres/index.js';
import { scopeKeyOf } from '../../src/store/sqlite/driver.js';
import { toDollar } from '../../src/store/sql/dialect.js';
import { TABLE_KEYS, type TableName } from '../../src/store/tables.js';
import { TEST_POLICY, tempDir } from '../helpers.js';

export type Row = Record<string, unknown>;

export interface Column {
  readonly name: string;
  /** INTEGER or TEXT (the two column types memauth uses). */
  readonly type: 'INTEGER' | 'TEXT';
}

/** Statements under the API, for tamper and trigger tests. SQL uses `?` placeholders on both drivers. */
export interface Raw {
  readonly kind: 'sqlite' | 'postgres';
  /** Run one statement; the rows of a query (empty for others). */
  query(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** The storable columns of a table, in order (generated columns excluded). */
  columns(table: string): Promise<Column[]>;
  /** The physical row key usable in `WHERE <rowKey> = ?`: `rowid` (SQLite) or `ctid` (PostgreSQL). */
  readonly rowKey: string;
  /** Names of memauth's triggers. */
  triggerNames(): Promise<string[]>;
  /** Drop a table's UPDATE and/or DELETE immutability triggers (tamper tests only). */
  dropTriggers(table: string, kinds: ReadonlyArray<'update' | 'delete'>): Promise<void>;
  /**
   * The driver's native "insert, or rewrite the row that is already there" statement for
   * `INSERT INTO table (cols) <source>`: `INSERT OR REPLACE` (SQLite) or `INSERT … ON CONFLICT
   * (primary key) DO UPDATE SET every column = EXCLUDED` (PostgreSQL).
   */
  replaceSql(table: string, cols: readonly string[], source: string): string;
  /** After a raw INSERT into records: add its search-index entry where the driver keeps one separately. */
  indexRecord(id: string): Promise<void>;
  /**
   * After the memory is closed: where any of `needles` can still be found in the store's
   * storage (files, tables, search index), after the driver's own compaction (VACUUM FULL on
   * PostgreSQL). Empty when it is gone everywhere this test can look.
   */
  residue(needles: readonly string[]): Promise<string[]>;
}

export interface OpenOptions {
  readonly policy?: PolicyInput;
  readonly clock?: () => Date;
  readonly checkpointKey?: string | false;
  /** the facade's read cache (default on, as openMemory's). */
  readonly cache?: boolean;
  /** an embedder (semantic and hybrid search); default none. */
  readonly embedder?: Embedder;
}

export interface Env {
  readonly mem: Memory;
  readonly raw: Raw;
  /** a temp directory of this env (checkpoint sidecar; the SQLite file). */
  readonly dir: string;
  /** the sidecar file with copies of every signed checkpoint. */
  readonly checkpointFile: string;
  /** open another memory on the same store (same options, `more` replacing some); the caller closes it. */
  reopen(more?: OpenOptions): Promise<Memory>;
  /** close the memory (idempotent). */
  close(): Promise<void>;
  /** close and remove everything this env created. */
  dispose(): Promise<void>;
}

export interface StoreFactory {
  readonly name: string;
  readonly kind: 'sqlite' | 'postgres';
  open(opts?: OpenOptions): Promise<Env>;
}

const memOpts = (opts: OpenOptions) => ({
  policy: opts.policy ?? TEST_POLICY,
  ...(opts.clock ? { clock: opts.clock } : {}),
  ...(opts.checkpointKey !== undefined ? { checkpointKey: opts.checkpointKey } : {}),
  ...(opts.cache !== undefined ? { cache: opts.cache } : {}),
  ...(opts.embedder !== undefined ? { embedder: opts.embedder } : {}),
});

// ------------------------------------------------------------------ SQLite

const SQLITE_TRIGGERS: Record<string, { update: string[]; delete: string[] }> = {
  records: { update: ['records_provenance_immutable', 'records_erase_only', 'records_claims_erase_only', 'records_version_immutable'], delete: ['records_no_delete'] },
  tokens: { update: ['tokens_revoke_only'], delete: ['tokens_no_delete'] },
};

/**
 * Real SQLite files in fresh temp directories (openMemory's defaults: key and sidecar next to the
 * file), with the facade's read cache on or off unless a case asks for one.
 */
export function sqliteStoreWith(cache: boolean): StoreFactory {
  return {
    name: cache ? 'sqlite, read cache on' : 'sqlite, read cache off',
    kind: 'sqlite',
    open: (opts = {}) => openSqlite({ cache, ...opts }),
  };
}

async function openSqlite(opts: OpenOptions): Promise<Env> {
  const dir = tempDir();
  const file = path.join(dir, 'memauth.db');
  const mem = await openMemory({ path: file, ...memOpts(opts) });
  const db = (mem.driver as SqliteDriver).unsafeDatabase();
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await mem.close();
  };
  const raw: Raw = {
    kind: 'sqlite',
    rowKey: 'rowid',
    async query(sql, params = []) {
      const st = db.prepare(sql);
      if (st.reader) return st.all(...params) as Row[];
      st.run(...params);
      return [];
    },
    async columns(table) {
      return (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string; type: string }>).map((c) => ({ name: c.name, type: c.type === 'INTEGER' ? 'INTEGER' : 'TEXT' }));
    },
    async triggerNames() {
      return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    },
    async dropTriggers(table, kinds) {
      const names = SQLITE_TRIGGERS[table] ?? { update: [`${table}_no_update`], delete: [`${table}_no_delete`] };
      for (const k of kinds) for (const n of names[k]) db.exec(`DROP TRIGGER IF EXISTS ${n}`);
    },
    replaceSql: (table, cols, source) => `INSERT OR REPLACE INTO ${table} (${cols.join(', ')}) ${source}`,
    async indexRecord(id) {
      const r = db.prepare('SELECT rowid, tenant, scope, content FROM records WHERE id = ?').get(id) as { rowid: number; tenant: string; scope: string; content: string };
      const fts = (mem.driver as SqliteDriver).searchIndexTable(r.tenant);
      if (fts === null) throw new Error(`indexRecord: tenant ${r.tenant} has no search index yet (write one record through the API first)`);
      db.prepare(`INSERT INTO ${fts} (rowid, content, scope_key) VALUES (?, ?, ?)`).run(r.rowid, r.content, scopeKeyOf(r.tenant, r.scope));
    },
    async residue(needles) {
      const found: string[] = [];
      for (const f of fs.readdirSync(dir).filter((x) => x.startsWith('memauth.db') && !x.endsWith('.key') && !x.endsWith('.checkpoints'))) {
        const bytes = fs.readFileSync(path.join(dir, f));
        for (const n of needles) if (bytes.includes(n)) found.push(`${f}: ${JSON.stringify(n)}`);
      }
      return found;
    },
  };
  return {
    mem,
    raw,
    dir,
    checkpointFile: `${file}.checkpoints`,
    reopen: (more: OpenOptions = {}) => openMemory({ path: file, ...memOpts({ ...opts, ...more }) }),
    close,
    dispose: async () => {
      await close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** SQLite with the facade's read cache on (openMemory's default). */
export const sqliteStore: StoreFactory = sqliteStoreWith(true);
/** SQLite with the facade's read cache off. */
export const sqliteNoCacheStore: StoreFactory = sqliteStoreWith(false);

// ------------------------------------------------------------------ PostgreSQL

/**
 * A fresh schema per env in the PostgreSQL database at `server.url`; `dataDir` (when known and
 * readable) lets the deletion check look into the relation files after VACUUM FULL.
 */
export function postgresStore(server: Promise<{ url: string; dataDir: string | null }>): StoreFactory {
  return {
    name: 'postgres',
    kind: 'postgres',
    async open(opts = {}) {
      const { url, dataDir } = await server;
      const schema = `t_${randomBytes(6).toString('hex')}`;
      const dir = tempDir();
      const checkpointFile = path.join(dir, 'checkpoints.jsonl');
      // like the SQLite file's <db>.key: one checkpoint key for every process that opens this store
      const key = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const connect = async (more: OpenOptions = {}): Promise<Memory> =>
        openMemory({ driver: await PostgresDriver.connect(url, { schema, poolSize: 4 }), checkpointFile, checkpointKey: key, ...memOpts({ ...opts, ...more }) });
      const mem = await connect();
      const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
      await client.connect();
      let closed = false;
      const close = async (): Promise<void> => {
        if (closed) return;
        closed = true;
        await mem.close();
      };
      const q = async (sql: string, params: readonly unknown[] = []): Promise<Row[]> => (await client.query(toDollar(sql), [...params])).rows as Row[];
      const raw: Raw = {
        kind: 'postgres',
        rowKey: 'ctid',
        query: q,
        async columns(table) {
          const rows = await q("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = ? AND table_name = ? AND is_generated = 'NEVER' ORDER BY ordinal_position", [
            schema,
            table,
          ]);
          return rows.map((r) => ({ name: String(r.column_name), type: /int/.test(String(r.data_type)) ? 'INTEGER' : 'TEXT' }));
        },
        async triggerNames() {
          const rows = await q(
            'SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND NOT t.tgisinternal ORDER BY 1',
            [schema],
          );
          return rows.map((r) => String(r.tgname));
        },
        async dropTriggers(table, kinds) {
          const names = SQLITE_TRIGGERS[table] ?? { update: [`${table}_no_update`], delete: [`${table}_no_delete`] };
          for (const k of kinds) for (const n of names[k]) await q(`DROP TRIGGER IF EXISTS ${n} ON ${table}`);
          // TRUNCATE is a DELETE too
          if (kinds.includes('delete')) await q(`DROP TRIGGER IF EXISTS ${table}_no_truncate ON ${table}`);
        },
        replaceSql(table, cols, source) {
          const pk = TABLE_KEYS[table as TableName] as readonly string[] | undefined;
          if (!pk) throw new Error(`no primary key known for ${table}`);
          const set = cols.filter((c) => !pk.includes(c)).map((c) => `${c} = EXCLUDED.${c}`);
          return `INSERT INTO ${table} (${cols.join(', ')}) ${source} ON CONFLICT (${pk.join(', ')}) DO UPDATE SET ${set.join(', ')}`;
        },
        async indexRecord() {
          // the tsvector is a generated column: a raw INSERT indexes itself
        },
        async residue(needles) {
          /** VACUUM FULL and CHECKPOINT, then the needles found in the relation files of records, its indexes and TOAST. */
          const relationResidue = async (needles: readonly string[]): Promise<string[]> => {
            const out: string[] = [];
            await q('VACUUM FULL records');
            const rels = await q(
              `SELECT c.relname, pg_relation_filepath(c.oid) AS file FROM pg_class c
               WHERE c.oid = 'records'::regclass OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'records'::regclass)
                  OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'records'::regclass)
                  OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'records'::regclass))`,
            );
            await q('CHECKPOINT');
            for (const r of rels) {
              const base = path.join(dataDir!, String(r.file));
              for (const f of [base, `${base}.1`]) {
                if (!fs.existsSync(f)) continue;
                const bytes = fs.readFileSync(f);
                for (const n of needles) if (bytes.includes(n) || bytes.includes(n.toLowerCase())) out.push(`${String(r.relname)} (${String(r.file)}): ${JSON.stringify(n)}`);
              }
            }
            return out;
          };
          const found: string[] = [];
          for (const n of needles) {
            const lower = n.toLowerCase();
            const [hit] = await q("SELECT count(*) AS n FROM records WHERE strpos(coalesce(content, ''), ?) > 0 OR strpos(search::text, ?) > 0", [n, lower]);
            if (Number(hit?.n) > 0) found.push(`records row or tsvector: ${JSON.stringify(n)}`);
            const [stat] = await q('SELECT count(*) AS n FROM ts_stat(?) WHERE word = ?', ['SELECT search FROM records', lower]);
            if (Number(stat?.n) > 0) found.push(`search lexemes (ts_stat): ${JSON.stringify(lower)}`);
          }
          // what is left in dead row versions and index pages goes with a rewrite of the table; a
          // rewrite keeps a version some other transaction of the cluster may still see (test files
          // run concurrently in one database), so the file check is retried until no snapshot holds
          // it back — a deleted row that is still stored fails after the last try
          if (dataDir !== null && fs.existsSync(dataDir)) {
            let inFiles: string[] = [];
            for (let attempt = 0; attempt < 40; attempt++) {
              if (attempt > 0) await new Promise((r) => setTimeout(r, 250));
              inFiles = await relationResidue(needles);
              if (inFiles.length === 0) break;
            }
            found.push(...inFiles);
          } else await q('VACUUM FULL records');
          return found;
        },
      };
      return {
        mem,
        raw,
        dir,
        checkpointFile,
        reopen: connect,
        close,
        dispose: async () => {
          await close();
          try {
            await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          } finally {
            await client.end();
            fs.rmSync(dir, { recursive: true, force: true });
          }
        },
      };
    },
  };
}
