/**
 * `storage/`: the tracker object's SQLite. The schema (this file), the write-through stores
 * (`sql-tracker-store.ts`, `sql-affinity-store.ts`, `sql-worker-profile.ts`), the request journal
 * and its rows (`request-journal.ts`, `journal-entries.ts`, `request-rows.ts`, `row-groups.ts`),
 * u64 BLOBs (`u64.ts`) and the object's stored name (`identity.ts`). The replication log's tables
 * live beside the replicator, in `replication/`.
 *
 * SQLite layout of a tracker object. One row per worker and one per live request, so an `/add`
 * writes one row; prompts are one BLOB. Requests carry `seq`, their add order, because each rank's
 * prefill FIFO (and so the decay anchor) must come back in that order after a restart.
 * `WITHOUT ROWID` keys the table by request id alone, with no second index to write. `journal`
 * holds request changes not yet folded into `requests`, one row per call that grouped them
 * (`request-journal.ts`). `catalog` holds the selection API's worker records, one row per worker id:
 * its winning upsert (floors merged in) as the replication codec writes it, so one encoding serves
 * the wire and the disk; the record's judgement is derived again on hydrate. `leases` holds one row
 * per frontend lease (`lease-rows.ts` says how its grants and cuts are packed and what a renewal
 * writes); an owned booking's row names its owner and grant in three columns that stay NULL, as
 * they do in rows written before leases existed, for every unowned one. `kv_streams`, `kv_journal`
 * and `kv_checkpoints` hold the engine-event index, grouped per call (`kv-rows.ts`).
 */

export const TRACKER_SCHEMA = `
CREATE TABLE IF NOT EXISTS workers (
  worker_id BLOB PRIMARY KEY,
  block_size INTEGER NOT NULL,
  dp_start INTEGER NOT NULL,
  dp_size INTEGER NOT NULL,
  worker_type TEXT,
  router_config TEXT,
  key_ts REAL NOT NULL DEFAULT 0,
  key_origin TEXT NOT NULL DEFAULT '',
  incarnation BLOB
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS requests (
  request_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  worker_id BLOB NOT NULL,
  dp_rank INTEGER NOT NULL,
  hashes BLOB NOT NULL,
  new_isl_tokens INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  prefill_done INTEGER NOT NULL DEFAULT 0,
  anchor_at INTEGER,
  expected_output_tokens INTEGER,
  prefill_duration_ms REAL,
  add_ts REAL NOT NULL DEFAULT 0,
  origin TEXT NOT NULL DEFAULT '',
  deadline INTEGER,
  prefill_ts REAL,
  prefill_origin TEXT,
  cache_block_hashes BLOB,
  cache_sequence_hashes BLOB,
  owner TEXT,
  grant_at INTEGER,
  grant_deadline INTEGER
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (
  seq INTEGER PRIMARY KEY,
  entries TEXT NOT NULL,
  hashes BLOB
);
CREATE TABLE IF NOT EXISTS session_bindings (
  session_id TEXT NOT NULL,
  hop TEXT NOT NULL,
  worker_id BLOB NOT NULL,
  dp_rank INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  key_ts REAL NOT NULL DEFAULT 0,
  key_origin TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (session_id, hop)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS catalog (
  worker_id BLOB PRIMARY KEY,
  upsert BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS leases (
  owner TEXT PRIMARY KEY,
  steps BLOB NOT NULL,
  cuts BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kv_streams (
  worker_id BLOB NOT NULL,
  dp_rank INTEGER NOT NULL,
  epoch TEXT NOT NULL,
  epoch_ts REAL NOT NULL,
  epoch_origin TEXT NOT NULL,
  next_seq INTEGER NOT NULL,
  PRIMARY KEY (worker_id, dp_rank)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kv_journal (
  seq INTEGER PRIMARY KEY,
  worker_id BLOB NOT NULL,
  dp_rank INTEGER NOT NULL,
  blocks INTEGER NOT NULL,
  changes BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS kv_checkpoints (
  worker_id BLOB NOT NULL,
  dp_rank INTEGER NOT NULL,
  part INTEGER NOT NULL,
  blocks INTEGER NOT NULL,
  changes BLOB NOT NULL,
  PRIMARY KEY (worker_id, dp_rank, part)
) WITHOUT ROWID;
`;

export interface WorkerRow extends Record<string, SqlStorageValue> {
  worker_id: ArrayBuffer;
  block_size: number;
  dp_start: number;
  dp_size: number;
  worker_type: string | null;
  router_config: string | null;
  /** The registration's replication key. */
  key_ts: number;
  key_origin: string;
  /** The worker's incarnation as an 8-byte u64 (`u64.ts`); NULL when it gave none. */
  incarnation: ArrayBuffer | null;
}

export interface CatalogRow extends Record<string, SqlStorageValue> {
  worker_id: ArrayBuffer;
  /** The record's `catalog_upsert` event, MessagePack (`replication/event-codec.ts`). */
  upsert: ArrayBuffer;
}

export interface RequestRow extends Record<string, SqlStorageValue> {
  request_id: string;
  seq: number;
  worker_id: ArrayBuffer;
  dp_rank: number;
  hashes: ArrayBuffer;
  new_isl_tokens: number;
  started_at: number;
  prefill_done: number;
  anchor_at: number | null;
  expected_output_tokens: number | null;
  prefill_duration_ms: number | null;
  /** The add's replication key. */
  add_ts: number;
  origin: string;
  /** When the request expires, epoch ms (carried from the replica that accepted it). */
  deadline: number | null;
  /** The key of its newest prefill completion, if any. */
  prefill_ts: number | null;
  prefill_origin: string | null;
  /** What the cache index records of it (`request-rows.ts`), for a selection booking. */
  cache_block_hashes: ArrayBuffer | null;
  cache_sequence_hashes: ArrayBuffer | null;
  /** The owner whose lease keeps it, and the grant it was made under (all NULL: unowned). */
  owner: string | null;
  grant_at: number | null;
  grant_deadline: number | null;
}

/** One owner's lease: its grants and cuts, packed as `lease-rows.ts` says. */
export interface LeaseRow extends Record<string, SqlStorageValue> {
  owner: string;
  steps: ArrayBuffer;
  cuts: ArrayBuffer;
}

/** `/route`'s session affinity bindings, one per (session, hop). */
export interface SessionBindingRow extends Record<string, SqlStorageValue> {
  session_id: string;
  hop: string;
  worker_id: ArrayBuffer;
  dp_rank: number;
  expires_at: number;
  /** The binding's replication key (0 and '' for one made before keys were kept). */
  key_ts: number;
  key_origin: string;
}

/** Columns added to `workers` after its first release: nullable, so older rows stay readable. */
const ADDED_WORKER_COLUMNS = {
  worker_type: "TEXT",
  router_config: "TEXT",
  key_ts: "REAL NOT NULL DEFAULT 0",
  key_origin: "TEXT NOT NULL DEFAULT ''",
  incarnation: "BLOB",
} as const;
const ADDED_BINDING_COLUMNS = {
  key_ts: "REAL NOT NULL DEFAULT 0",
  key_origin: "TEXT NOT NULL DEFAULT ''",
} as const;
const ADDED_REQUEST_COLUMNS = {
  add_ts: "REAL NOT NULL DEFAULT 0",
  origin: "TEXT NOT NULL DEFAULT ''",
  deadline: "INTEGER",
  prefill_ts: "REAL",
  prefill_origin: "TEXT",
  cache_block_hashes: "BLOB",
  cache_sequence_hashes: "BLOB",
  owner: "TEXT",
  grant_at: "INTEGER",
  grant_deadline: "INTEGER",
} as const;

/**
 * Brings a database written by an older version up to {@link TRACKER_SCHEMA}: adds the columns
 * and tables that came later. Each step is guarded (SQLite has no `ADD COLUMN IF NOT EXISTS`), so
 * it is safe on every start and on databases already current.
 */
export function migrateTrackerSchema(sql: SqlStorage): void {
  addMissingColumns(sql, "workers", ADDED_WORKER_COLUMNS);
  addMissingColumns(sql, "requests", ADDED_REQUEST_COLUMNS);
  if (hasTable(sql, "session_bindings")) addMissingColumns(sql, "session_bindings", ADDED_BINDING_COLUMNS);
  sql.exec(TRACKER_SCHEMA);
}

function addMissingColumns(sql: SqlStorage, table: string, columns: Record<string, string>): void {
  const present = new Set(
    sql
      .exec<{ name: string }>(`PRAGMA table_info(${table})`)
      .toArray()
      .map((column) => column.name),
  );
  for (const [column, type] of Object.entries(columns)) {
    if (!present.has(column)) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
}

function hasTable(sql: SqlStorage, name: string): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;
}
