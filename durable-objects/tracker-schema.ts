/**
 * SQLite layout of a tracker object. One row per worker and one per live request, so an `/add`
 * writes one row; prompts are one BLOB. Requests carry `seq`, their add order, because each rank's
 * prefill FIFO (and so the decay anchor) must come back in that order after a restart.
 * `WITHOUT ROWID` keys the table by request id alone, with no second index to write.
 */

export const TRACKER_SCHEMA = `
CREATE TABLE IF NOT EXISTS workers (
  worker_id BLOB PRIMARY KEY,
  block_size INTEGER NOT NULL,
  dp_start INTEGER NOT NULL,
  dp_size INTEGER NOT NULL
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
  prefill_duration_ms REAL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value
) WITHOUT ROWID;
`;

export interface WorkerRow extends Record<string, SqlStorageValue> {
  worker_id: ArrayBuffer;
  block_size: number;
  dp_start: number;
  dp_size: number;
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
}
