/**
 * The PostgreSQL vector index: pgvector's `vector` type and cosine operator when the extension is
 * available, an exact scan over `real[]` in SQL otherwise ({@link PgVectorIndex.mode} says which,
 * so `memauth init`/`serve` can report it).
 *
 * Layout: `vector_indexes` registers each embedder (id string ↔ n, dimensions); `record_vectors`
 * holds one row per (tenant, record id, index) with the content hash, the scope and the unit-length
 * vector. Every query filters on tenant, index and scope in its WHERE clause and ranks only the
 * rows left: an exact nearest-neighbour search within one tenant's scope (no approximate index, so
 * no hit of the scope is lost to another scope's or tenant's nearer vectors, and no score depends
 * on another tenant's data — docs/design.md § Search and tenant isolation). pgvector is found in
 * whatever schema it was created in; its type and operator are named with that schema.
 *
 * May import: src/core/, src/store/ (pg is reached through the {@link Queryable} shape).
 */
import { MemauthError } from '../../core/errors.js';
import { normalize } from '../../core/vector-math.js';
import { type PendingRecord, type VectorHit, type VectorItem, byScoreThenId, checkK, checkVector } from '../vector.js';

/** What the index needs of a `pg.Pool`, `pg.PoolClient` or `pg.Client`. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** `pgvector`: the extension's type and `<=>`; `exact`: `real[]` and a dot product in SQL. */
export type VectorMode = 'pgvector' | 'exact';

/** Options of {@link PgVectorIndex.open}. */
export interface PgVectorOptions {
  /** `auto` (default): pgvector when it can be created or already exists, else exact; or force one. */
  readonly mode?: 'auto' | VectorMode;
}

/** The schema pgvector lives in, quoted for SQL; null when it is not installed in this database. */
async function vectorSchema(db: Queryable): Promise<string | null> {
  const r = await db.query(`SELECT quote_ident(n.nspname) AS ns FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`);
  return (r.rows[0]?.ns as string | undefined) ?? null;
}

/** Creates pgvector when the server has it and this role may; the schema it is in, or null. */
async function tryCreateExtension(db: Queryable): Promise<string | null> {
  const known = await vectorSchema(db);
  if (known !== null) return known;
  const avail = await db.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`);
  if (avail.rows.length === 0) return null;
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS vector');
  } catch {
    return null; // no privilege to create it: exact scan
  }
  return vectorSchema(db);
}

/** The element type of `record_vectors.embedding` when the table exists: `vector`, `_float4`, or null. */
async function existingColumnType(db: Queryable): Promise<string | null> {
  const r = await db.query(`SELECT udt_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'record_vectors' AND column_name = 'embedding'`);
  return (r.rows[0]?.udt_name as string | undefined) ?? null;
}

/** The vector index of one PostgreSQL schema (the connection's current schema). */
export class PgVectorIndex {
  private constructor(
    private readonly db: Queryable,
    /** which implementation answers queries. */
    readonly mode: VectorMode,
    /** pgvector's schema, quoted (pgvector mode only). */
    private readonly ns: string,
  ) {}

  /**
   * Creates the index's tables when missing, choosing pgvector or the exact scan once (a table
   * created in one mode keeps it).
   *
   * @throws MemauthError DATABASE_UNAVAILABLE when `mode: 'pgvector'` is asked and the extension
   *   is missing; errors of `pg` for an unreachable server.
   */
  static async open(db: Queryable, opts: PgVectorOptions = {}): Promise<PgVectorIndex> {
    const existing = await existingColumnType(db);
    const ns = existing === '_float4' || opts.mode === 'exact' ? null : await tryCreateExtension(db);
    const mode: VectorMode = existing === 'vector' || (existing === null && ns !== null && opts.mode !== 'exact') ? 'pgvector' : 'exact';
    if (opts.mode === 'pgvector' && (mode !== 'pgvector' || ns === null))
      throw new MemauthError('DATABASE_UNAVAILABLE', 'pgvector is not available in this database (install the extension, or let memauth use the exact scan)');
    if (mode === 'pgvector' && ns === null) throw new MemauthError('DATABASE_UNAVAILABLE', 'record_vectors uses pgvector but the extension is missing from this database');
    const column = mode === 'pgvector' ? `${ns as string}.vector` : 'real[]';
    // only when missing: CREATE … IF NOT EXISTS still needs CREATE on the schema, which a server
    // role that is not the tables' owner (docs/postgresql.md § Set-up) does not have
    if (existing === null) {
      await db.query(`CREATE TABLE IF NOT EXISTS vector_indexes (id serial PRIMARY KEY, embedder text NOT NULL UNIQUE, dimensions integer NOT NULL CHECK (dimensions > 0))`);
      await db.query(`CREATE TABLE IF NOT EXISTS record_vectors (
        index_id integer NOT NULL REFERENCES vector_indexes (id), tenant text NOT NULL, record_id text NOT NULL,
        content_hash text NOT NULL, scope text NOT NULL, embedding ${column} NOT NULL, PRIMARY KEY (tenant, record_id, index_id))`);
      await db.query('CREATE INDEX IF NOT EXISTS record_vectors_scope ON record_vectors (tenant, index_id, scope)');
    }
    return new PgVectorIndex(db, mode, ns ?? '');
  }

  /** The embedder's registry entry, created when missing (`dimensions` must match a known one). */
  private async ensure(embedder: string, dimensions: number): Promise<number> {
    await this.db.query('INSERT INTO vector_indexes (embedder, dimensions) VALUES ($1, $2) ON CONFLICT (embedder) DO NOTHING', [embedder, dimensions]);
    const r = await this.db.query('SELECT id, dimensions FROM vector_indexes WHERE embedder = $1', [embedder]);
    const row = r.rows[0] as { id: number; dimensions: number };
    if (row.dimensions !== dimensions) throw new MemauthError('INVALID_ARGUMENT', `embedder ${embedder} is indexed with ${row.dimensions} dimensions, not ${dimensions}`, { field: 'dimensions' });
    return row.id;
  }

  /** The SQL value of a vector: pgvector's text form, or a real[] (as a JS array). */
  private param(v: Float32Array): unknown {
    const xs = Array.from(normalize(v));
    return this.mode === 'pgvector' ? `[${xs.join(',')}]` : xs;
  }

  /**
   * Stores vectors of one tenant computed by `embedder`, replacing the record's previous vector
   * for that embedder. Same contract as the SQLite index's `upsert`.
   *
   * @throws MemauthError INVALID_ARGUMENT for a vector of the wrong length or with a non-finite value.
   */
  async upsert(tenant: string, embedder: string, dimensions: number, items: readonly VectorItem[]): Promise<void> {
    for (const it of items) checkVector(it.vector, dimensions, 'vector');
    const id = await this.ensure(embedder, dimensions);
    const cast = this.mode === 'pgvector' ? `$6::${this.ns}.vector` : '$6::real[]';
    for (const it of items)
      await this.db.query(
        `INSERT INTO record_vectors (index_id, tenant, record_id, content_hash, scope, embedding) VALUES ($1, $2, $3, $4, $5, ${cast})
         ON CONFLICT (tenant, record_id, index_id) DO UPDATE SET content_hash = EXCLUDED.content_hash, scope = EXCLUDED.scope, embedding = EXCLUDED.embedding`,
        [id, tenant, it.recordId, it.contentHash, it.scope, this.param(it.vector)],
      );
  }

  /**
   * The `k` records of `tenant` in `scope` nearest to `query` under `embedder` (exact; filtered
   * by tenant and scope before ranking).
   *
   * @returns hits by cosine similarity descending, then record id; `[]` for an unknown embedder.
   * @throws MemauthError INVALID_ARGUMENT for a query of the wrong length or a `k` outside 1…4096.
   */
  async knn(tenant: string, embedder: string, scope: string, query: Float32Array, k: number): Promise<VectorHit[]> {
    checkK(k);
    const e = (await this.db.query('SELECT id, dimensions FROM vector_indexes WHERE embedder = $1', [embedder])).rows[0] as { id: number; dimensions: number } | undefined;
    if (e === undefined) return [];
    checkVector(query, e.dimensions, 'query');
    const score = this.mode === 'pgvector' ? `1 - (embedding OPERATOR(${this.ns}.<=>) $4::${this.ns}.vector)` : '(SELECT coalesce(sum(a * b), 0) FROM unnest(embedding, $4::real[]) AS t (a, b))';
    const r = await this.db.query(
      `SELECT record_id, content_hash, ${score} AS score FROM record_vectors
       WHERE tenant = $1 AND index_id = $2 AND scope = $3 ORDER BY score DESC, record_id LIMIT $5`,
      [tenant, e.id, scope, this.param(query), k],
    );
    return r.rows.map((x) => ({ recordId: x.record_id as string, contentHash: x.content_hash as string, score: Number(x.score) })).sort(byScoreThenId);
  }

  /**
   * Erases every vector of a record (all embedders). The rows' space is reclaimed by VACUUM, as
   * for the store's other erased rows.
   *
   * @returns how many vectors were erased.
   */
  async deleteRecord(tenant: string, recordId: string): Promise<number> {
    const r = await this.db.query('DELETE FROM record_vectors WHERE tenant = $1 AND record_id = $2 RETURNING 1', [tenant, recordId]);
    return r.rows.length;
  }

  /** The same index (mode, pgvector schema) on another connection, e.g. a transaction's client. */
  on(db: Queryable): PgVectorIndex {
    return new PgVectorIndex(db, this.mode, this.ns);
  }

  /** Of `items`, those whose record is active in `tenant` with the item's content hash. */
  async current<T extends { recordId: string; contentHash: string }>(tenant: string, items: readonly T[]): Promise<T[]> {
    if (items.length === 0) return [];
    const r = await this.db.query(`SELECT id, content_hash FROM records WHERE tenant = $1 AND status = 'active' AND id = ANY($2::text[])`, [tenant, items.map((i) => i.recordId)]);
    const live = new Map(r.rows.map((x) => [x.id as string, x.content_hash as string]));
    return items.filter((it) => live.get(it.recordId) === it.contentHash);
  }

  /** Active records of `tenant` with no vector under `embedder` for their content hash, `id > after`, by id, at most `limit`. */
  async pending(tenant: string, embedder: string, after: string | null, limit: number): Promise<PendingRecord[]> {
    const r = await this.db.query(
      `SELECT r.id, r.scope, r.content, r.content_hash FROM records r
       WHERE r.tenant = $1 AND r.status = 'active' AND r.id > $2
         AND NOT EXISTS (SELECT 1 FROM record_vectors v JOIN vector_indexes i ON i.id = v.index_id
                         WHERE v.tenant = r.tenant AND v.record_id = r.id AND i.embedder = $3 AND v.content_hash = r.content_hash)
       ORDER BY r.id LIMIT $4`,
      [tenant, after ?? '', embedder, limit],
    );
    return r.rows.map((x) => ({ id: x.id as string, scope: x.scope as string, content: x.content as string, contentHash: x.content_hash as string }));
  }

  /** How many vectors `tenant` has under `embedder`. */
  async count(tenant: string, embedder: string): Promise<number> {
    const r = await this.db.query('SELECT count(*)::int AS n FROM record_vectors v JOIN vector_indexes i ON i.id = v.index_id WHERE v.tenant = $1 AND i.embedder = $2', [tenant, embedder]);
    return Number(r.rows[0]?.n ?? 0);
  }
}
