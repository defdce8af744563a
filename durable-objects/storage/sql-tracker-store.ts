import type { LeaseState } from "../core/lease/lease-table";
import type { KvChange, KvStoredChange, KvStream } from "../core/kv-events/kv-stream";
import type { LiveRequest } from "../core/live-request";
import { type EventKey, firstTsOf } from "../core/replica/clock";
import type { CatalogUpsertEvent } from "../core/replica/events";
import type { TrackerStore } from "../core/store";
import type { Tracker } from "../core/tracker";
import { decodeEvent, encodeEvent } from "../replication/event-codec";
import type { AddInput, RegisterInput } from "../types";
import { storeName } from "./identity";
import { KvRows } from "./kv-rows";
import { LeaseRows } from "./lease-rows";
import { RequestJournal, replayJournal, type Write } from "./request-journal";
import {
  COMPLETE_PREFILL,
  cachePromptOf,
  DELETE_REQUEST,
  MOVE_ANCHOR,
  requestValues,
  UPSERT_REQUEST,
} from "./request-rows";
import { bytesOf } from "./row-groups";
import { profileColumns, profileOfRow } from "./sql-worker-profile";
import {
  type CatalogRow,
  type LeaseRow,
  migrateTrackerSchema,
  type RequestRow,
  TRACKER_SCHEMA,
  type WorkerRow,
} from "./tracker-schema";
import { blobToHashes, blobToU64, u64ToBlob } from "./u64";

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
  private readonly write: Write = (query, ...bindings) => this.exec(query, ...bindings);
  private readonly journal = new RequestJournal(this.write);
  private readonly leases = new LeaseRows(this.write);
  private readonly kv = new KvRows(this.write);

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
    replayJournal(this.sql, this.write);
    // Catalog records first: a catalog worker's ranks keep their bookings by its floors.
    for (const row of this.sql.exec<CatalogRow>("SELECT * FROM catalog")) {
      const upsert = decodeEvent(new Uint8Array(row.upsert));
      if (upsert.type !== "catalog_upsert") continue;
      tracker.clock.observe(upsert.ts);
      tracker.catalog.restore(upsert);
    }
    for (const row of this.sql.exec<LeaseRow>("SELECT * FROM leases")) {
      const lease = this.leases.restore(row);
      // New grants must come after the cuts and grants already made, whatever the wall clock says now.
      const latest = Math.max(lease.cuts.at(-1) ?? 0, lease.newestGrant()?.at ?? 0);
      tracker.clock.observe(firstTsOf(latest));
      tracker.leases.restore(lease);
    }
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
          cachePrompt: cachePromptOf(row.cache_block_hashes, row.cache_sequence_hashes),
          ...ownerOf(row),
        },
        row.started_at,
        row.prefill_done !== 0,
        row.anchor_at ?? undefined,
        { ts: row.add_ts, origin: row.origin },
        row.deadline ?? undefined,
        row.prefill_ts === null ? undefined : { ts: row.prefill_ts, origin: row.prefill_origin ?? "" },
      );
    }
    this.kv.hydrate(this.sql, tracker.kv, tracker.clock);
  }

  kvStreamSet(stream: KvStream): void {
    this.ensureSchema();
    this.kv.streamSet(stream);
  }

  kvStreamCleared(workerId: bigint, dpRank: number): void {
    if (this.schemaReady) this.kv.streamCleared(workerId, dpRank);
  }

  kvApplied(workerId: bigint, dpRank: number, changes: readonly KvChange[]): void {
    this.ensureSchema();
    this.kv.applied(workerId, dpRank, changes);
  }

  kvCheckpointed(workerId: bigint, dpRank: number, runs: readonly Omit<KvStoredChange, "kind">[]): void {
    this.ensureSchema();
    this.kv.checkpointed(workerId, dpRank, runs);
  }

  kvRankCleared(workerId: bigint, dpRank: number): void {
    if (this.schemaReady) this.kv.rankCleared(workerId, dpRank);
  }

  kvWorkerCleared(workerId: bigint): void {
    if (this.schemaReady) this.kv.workerCleared(workerId);
  }

  workerAdded(input: RegisterInput, key: EventKey): void {
    this.ensureSchema();
    this.exec(
      `INSERT INTO workers (worker_id, block_size, dp_start, dp_size, worker_type, router_config, incarnation, key_ts, key_origin)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      u64ToBlob(input.workerId),
      input.blockSize,
      input.dpStart,
      input.dpSize,
      ...profileColumns(input),
      key.ts,
      key.origin,
    );
  }

  workerReshaped(input: RegisterInput, key: EventKey): void {
    this.exec(
      `INSERT OR REPLACE INTO workers (worker_id, block_size, dp_start, dp_size, worker_type, router_config, incarnation, key_ts, key_origin)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      u64ToBlob(input.workerId),
      input.blockSize,
      input.dpStart,
      input.dpSize,
      ...profileColumns(input),
      key.ts,
      key.origin,
    );
  }

  catalogSet(upsert: CatalogUpsertEvent): void {
    this.ensureSchema();
    this.exec(
      "INSERT OR REPLACE INTO catalog (worker_id, upsert) VALUES (?, ?)",
      u64ToBlob(upsert.workerId),
      bytesOf(encodeEvent(upsert)),
    );
  }

  catalogCleared(workerId: bigint): void {
    if (this.schemaReady) this.exec("DELETE FROM catalog WHERE worker_id = ?", u64ToBlob(workerId));
  }

  leaseSet(lease: LeaseState): void {
    // A lease may come before any worker: it creates the tables.
    this.ensureSchema();
    this.leases.set(lease);
  }

  leaseCleared(owner: string): void {
    if (this.schemaReady) this.leases.cleared(owner);
  }

  workerRemoved(workerId: bigint): void {
    // The worker's journaled requests go to the table first, so that one delete removes them all.
    this.journal.fold();
    const id = u64ToBlob(workerId);
    this.exec("DELETE FROM requests WHERE worker_id = ?", id);
    this.exec("DELETE FROM workers WHERE worker_id = ?", id);
  }

  requestAdded(req: LiveRequest, input: AddInput): void {
    const row = requestValues(req, input, ++this.seq);
    if (this.journal.takes(req.id)) this.journal.put(row);
    else this.exec(UPSERT_REQUEST, ...row);
  }

  prefillCompleted(req: LiveRequest): void {
    if (this.journal.takes(req.id)) this.journal.prefillCompleted(req.id, req.prefillTs, req.prefillOrigin);
    else this.exec(COMPLETE_PREFILL, req.prefillTs, req.prefillOrigin, req.id);
  }

  anchorMoved(req: LiveRequest, at: number): void {
    if (this.journal.takes(req.id)) this.journal.anchorMoved(req.id, at);
    else this.exec(MOVE_ANCHOR, at, req.id);
  }

  requestRemoved(req: LiveRequest): void {
    if (this.journal.takes(req.id)) this.journal.removed(req.id);
    else this.exec(DELETE_REQUEST, req.id);
  }

  /**
   * Runs `fn` (a call that changes many requests) with its request changes written as one journal
   * row (`request-journal.ts`), cleaning the journal's oldest rows afterwards if it is over its bounds,
   * and each lease it changed written once (`lease-rows.ts`).
   */
  group<T>(fn: () => T): T {
    return this.leases.group(() => this.journal.group(fn));
  }

  /** Cleans the journal's oldest rows down to `maxRows` rows and `maxBytes`, keeping up to `keepBytes` (tests). */
  cleanJournal(maxRows: number, maxBytes: number, keepBytes: number): void {
    this.journal.clean(maxRows, maxBytes, keepBytes);
  }

  /** Empties the journal into `requests` (tests). */
  foldJournal(): void {
    this.journal.fold();
  }

  /**
   * The last worker left. Lease rows stay: a lease belongs to a frontend, not to a worker, and one
   * that is live must keep its owner's next bookings admitted when a worker registers again.
   */
  trackerDeleted(): void {
    this.journal.fold();
    this.exec("DELETE FROM requests");
    this.exec("DELETE FROM workers");
    this.exec("DELETE FROM kv_streams");
    this.exec("DELETE FROM kv_journal");
    this.exec("DELETE FROM kv_checkpoints");
    this.kv.forget();
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

  /** Whether a catalog report to the directory failed and is owed (`directory/catalog-link.ts`). */
  catalogOwed(): boolean {
    if (!this.schemaReady) return false;
    return this.sql.exec("SELECT 1 FROM meta WHERE key = 'catalog_owed'").toArray().length > 0;
  }

  setCatalogOwed(owed: boolean): void {
    this.ensureSchema();
    if (owed) this.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('catalog_owed', 1)");
    else this.exec("DELETE FROM meta WHERE key = 'catalog_owed'");
  }

  /** Called after `deleteAll()` wiped the database, tables included. */
  forgetSchema(): void {
    this.schemaReady = false;
    this.seq = 0;
    this.journal.forget();
    this.leases.forget();
    this.kv.forget();
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

/** An owned booking's owner and grant from its row (nothing for an unowned one). */
function ownerOf(row: RequestRow): Pick<AddInput, "owner" | "grant"> {
  if (row.owner === null || row.grant_at === null || row.grant_deadline === null) return {};
  return { owner: row.owner, grant: { at: row.grant_at, deadline: row.grant_deadline } };
}

function hasTable(sql: SqlStorage, name: string): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;
}
