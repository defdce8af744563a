import type { EventKey } from "./core/clock";
import type { LiveRequest } from "./core/live-request";
import type { TrackerStore } from "./core/store";
import type { Tracker } from "./core/tracker";
import { storeName } from "./identity";
import { profileColumns, profileOfRow } from "./sql-worker-profile";
import { migrateTrackerSchema, TRACKER_SCHEMA, type RequestRow, type WorkerRow } from "./tracker-schema";
import type { AddInput, RegisterInput } from "./types";
import { blobToHashes, blobToU64, hashesToBlob, u64ToBlob } from "./u64";

/**
 * Writes the tracker's changes through to the object's SQLite database. `sql.exec` is synchronous
 * and writes made without an `await` between them commit together, before the output gate lets the
 * response out: a client never sees an acknowledgement of a change that was not persisted.
 * The schema is created on the first write only, so reading an absent tracker creates no storage,
 * and after the tracker is deleted the next registration starts from an empty database.
 */
export class SqlTrackerStore implements TrackerStore {
  /** Rows written so far (SQLite's own count), for metrics and the write-cost benchmark. */
  rowsWritten = 0;
  private schemaReady: boolean;
  private seq = 0;

  /**
   * @param name the object's name, stored with the schema (see `identity.ts`).
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly name = "",
  ) {
    this.schemaReady = hasTable(sql, "requests");
    if (this.schemaReady) migrateTrackerSchema(sql);
  }

  /** Rebuilds `tracker` from the database, requests in their add order. */
  hydrate(tracker: Tracker): void {
    if (!this.schemaReady) return;
    for (const row of this.sql.exec<WorkerRow>("SELECT * FROM workers")) {
      tracker.restoreWorker(
        {
          workerId: blobToU64(row.worker_id),
          blockSize: row.block_size,
          dpStart: row.dp_start,
          dpSize: row.dp_size,
          ...profileOfRow(row),
        },
        { ts: row.key_ts, origin: row.key_origin },
      );
    }
    for (const row of this.sql.exec<RequestRow>("SELECT * FROM requests ORDER BY seq")) {
      this.seq = row.seq;
      tracker.restoreRequest(
        {
          requestId: row.request_id,
          workerId: blobToU64(row.worker_id),
          dpRank: row.dp_rank,
          hashes: blobToHashes(row.hashes),
          newIslTokens: row.new_isl_tokens,
          expectedOutputTokens: row.expected_output_tokens ?? undefined,
          expectedPrefillDurationMs: row.prefill_duration_ms ?? undefined,
        },
        row.started_at,
        row.prefill_done !== 0,
        row.anchor_at ?? undefined,
        { ts: row.add_ts, origin: row.origin },
        row.deadline ?? undefined,
        row.prefill_ts === null ? undefined : { ts: row.prefill_ts, origin: row.prefill_origin ?? "" },
      );
    }
  }

  workerAdded(input: RegisterInput, key: EventKey): void {
    this.ensureSchema();
    this.exec(
      `INSERT INTO workers (worker_id, block_size, dp_start, dp_size, worker_type, router_config, key_ts, key_origin)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      u64ToBlob(input.workerId),
      input.blockSize,
      input.dpStart,
      input.dpSize,
      ...profileColumns(input),
      key.ts,
      key.origin,
    );
  }

  workerRemoved(workerId: bigint): void {
    const id = u64ToBlob(workerId);
    this.exec("DELETE FROM requests WHERE worker_id = ?", id);
    this.exec("DELETE FROM workers WHERE worker_id = ?", id);
  }

  requestAdded(req: LiveRequest, input: AddInput): void {
    this.exec(
      `INSERT INTO requests (request_id, seq, worker_id, dp_rank, hashes, new_isl_tokens, started_at,
         prefill_done, expected_output_tokens, prefill_duration_ms, add_ts, origin, deadline, prefill_ts,
         prefill_origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      req.id,
      ++this.seq,
      u64ToBlob(req.slot.workerId),
      req.slot.dpRank,
      hashesToBlob(input.hashes),
      req.prefillTokens,
      req.startedAt,
      // A replicated booking can arrive with its prefill already completed elsewhere.
      req.inPrefill || req.prefillTokens === 0 ? 0 : 1,
      req.expectedOutputTokens ?? null,
      Number.isNaN(req.prefillDurationMs) ? null : req.prefillDurationMs,
      req.addTs,
      req.origin,
      req.deadline,
      Number.isNaN(req.prefillTs) ? null : req.prefillTs,
      Number.isNaN(req.prefillTs) ? null : req.prefillOrigin,
    );
  }

  prefillCompleted(req: LiveRequest): void {
    this.exec(
      "UPDATE requests SET prefill_done = 1, prefill_ts = ?, prefill_origin = ? WHERE request_id = ?",
      req.prefillTs,
      req.prefillOrigin,
      req.id,
    );
  }

  anchorMoved(req: LiveRequest, at: number): void {
    this.exec("UPDATE requests SET anchor_at = ? WHERE request_id = ?", at, req.id);
  }

  requestRemoved(req: LiveRequest): void {
    this.exec("DELETE FROM requests WHERE request_id = ?", req.id);
  }

  trackerDeleted(): void {
    this.exec("DELETE FROM requests");
    this.exec("DELETE FROM workers");
  }

  /** A directory update that failed and is owed (`present`), or null. */
  directoryOwed(): boolean | null {
    if (!this.schemaReady) return null;
    const row = this.sql.exec("SELECT value FROM meta WHERE key = 'directory_owed'").toArray()[0];
    return row ? row.value === 1 : null;
  }

  setDirectoryOwed(present: boolean | null): void {
    this.ensureSchema();
    if (present === null) this.exec("DELETE FROM meta WHERE key = 'directory_owed'");
    else this.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('directory_owed', ?)", present ? 1 : 0);
  }

  /** Called after `deleteAll()` wiped the database, tables included. */
  forgetSchema(): void {
    this.schemaReady = false;
    this.seq = 0;
  }

  private ensureSchema(): void {
    if (this.schemaReady) return;
    this.sql.exec(TRACKER_SCHEMA);
    storeName(this.sql, this.name);
    this.schemaReady = true;
  }

  private exec(query: string, ...bindings: SqlStorageValue[]): void {
    this.rowsWritten += this.sql.exec(query, ...bindings).rowsWritten;
  }
}

function hasTable(sql: SqlStorage, name: string): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;
}
