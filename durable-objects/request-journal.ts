/**
 * Group commit for the `requests` table. A call that changes many requests at once (a `/batch`, a
 * batch of a peer's events) writes its changes as one `journal` row instead of one row per change;
 * every change to a request with a journaled change not yet folded goes to the journal too, so a
 * request's changes are always replayed in order.
 *
 * Every {@link FOLD_ROWS} journal rows or {@link FOLD_BYTES} the journal is *folded*, in the same
 * synchronous step as the call that filled it: removals and updates of requests that `requests`
 * holds are written there; the newest journal-only live requests, up to {@link KEEP_BYTES}, are
 * written again as a few large journal rows (a snapshot), older ones to `requests`; then the old
 * journal rows are deleted. A request booked and freed within about two folds (all of a busy
 * `/batch` client's short requests) never costs a row of its own.
 *
 * Durability is unchanged: a journal row commits with the call's other writes, before its answer
 * leaves. After a restart, {@link replayJournal} applies the journal to `requests` in order (a redo
 * log) before the tracker is read back.
 *
 * Why: SQLite costs ~10 µs and one billed row per row written; a 256-op `/batch` wrote 256 rows.
 * Memory: the journal keeps the rows it may rewrite, about FOLD_BYTES + KEEP_BYTES counted as
 * below (measured in V8: 4 MB counted of removals held 4.6 MB of heap, of 64-hash bookings 5.6 MB).
 */
import {
  COMPLETE_PREFILL,
  DELETE_REQUEST,
  MOVE_ANCHOR,
  REQUEST_COLUMN,
  type RequestValues,
  UPSERT_REQUEST,
} from "./request-rows";
import { GroupDepth, ROW_BYTES } from "./row-groups";
import { blobToU64, u64ToBlob } from "./u64";

/** Journal rows between folds. */
export const FOLD_ROWS = 256;
/** Estimated journal bytes between folds. */
export const FOLD_BYTES = 4 * 1024 * 1024;
/** Estimated bytes of journal-only live requests a fold keeps in the journal (newest first). */
export const KEEP_BYTES = 4 * 1024 * 1024;

/**
 * Bytes counted for each change besides its id and prompt: about what its pending state costs in
 * memory (a map entry and an object; a put's row array is counted 128 more), so that the byte
 * bounds below bound the journal's memory too, not only its rows.
 */
const STATE_BYTES = 128;

const PUT = 0;
const PREFILL = 1;
const ANCHOR = 2;
const REMOVE = 3;

/**
 * One journaled change, as JSON: a put carries every column of {@link REQUEST_COLUMN} in order, with
 * the worker id as a decimal string and the prompt as its hash count (its bytes are in the row's
 * `hashes` BLOB, in entry order).
 */
type Entry =
  | [typeof PUT, ...(string | number | null)[]]
  | [typeof PREFILL, string, number, string]
  | [typeof ANCHOR, string, number]
  | [typeof REMOVE, string];

/** What the fold writes for one request: its whole row, a delete, or column updates. */
interface Pending {
  row: RequestValues | null;
  /** Estimated journal bytes of `row`. */
  bytes: number;
  removed: boolean;
  /** `requests` holds a row for this id (written before its first journaled change). */
  inTable: boolean;
  prefill?: [ts: number, origin: string];
  anchorAt?: number;
}

export type Write = (query: string, ...bindings: SqlStorageValue[]) => void;

export class RequestJournal {
  private readonly pending = new Map<string, Pending>();
  private readonly groups = new GroupDepth();
  private entries: Entry[] = [];
  private blobs: ArrayBuffer[] = [];
  private blobBytes = 0;
  private rowBytes = 0;
  private rowsSinceFold = 0;
  private bytesSinceFold = 0;
  /** Rows in the journal table, snapshots included. */
  private rows = 0;

  constructor(private readonly write: Write) {}

  /** Whether a change to request `id` must go to the journal rather than to `requests`. */
  takes(id: string): boolean {
    return this.groups.open || this.pending.has(id);
  }

  /** Runs `fn` with every request change it makes journaled, in one row (more past ~1 MB). */
  group<T>(fn: () => T): T {
    return this.groups.run(fn, () => this.commit());
  }

  put(row: RequestValues): void {
    const id = row[REQUEST_COLUMN.request_id] as string;
    const state = this.stateOf(id, false);
    state.row = row;
    state.bytes = 2 * id.length + (row[REQUEST_COLUMN.hashes] as ArrayBuffer).byteLength + STATE_BYTES + 128;
    state.removed = false;
    state.prefill = undefined;
    state.anchorAt = undefined;
    this.putEntry(row, state.bytes);
  }

  prefillCompleted(id: string, ts: number, origin: string): void {
    const state = this.stateOf(id, true);
    if (state.row) {
      state.row[REQUEST_COLUMN.prefill_done] = 1;
      state.row[REQUEST_COLUMN.prefill_ts] = ts;
      state.row[REQUEST_COLUMN.prefill_origin] = origin;
    } else state.prefill = [ts, origin];
    this.add([PREFILL, id, ts, origin], 2 * (id.length + origin.length) + STATE_BYTES);
  }

  anchorMoved(id: string, at: number): void {
    const state = this.stateOf(id, true);
    if (state.row) state.row[REQUEST_COLUMN.anchor_at] = at;
    else state.anchorAt = at;
    this.add([ANCHOR, id, at], 2 * id.length + STATE_BYTES);
  }

  removed(id: string): void {
    const state = this.stateOf(id, true);
    state.row = null;
    state.removed = true;
    state.prefill = undefined;
    state.anchorAt = undefined;
    this.add([REMOVE, id], 2 * id.length + STATE_BYTES);
  }

  /**
   * Folds the journal: what `requests` holds is brought up to date, journal-only live requests are
   * written again to the journal (the newest, up to `keepBytes`) or to `requests`, and the old
   * journal rows are deleted. The open group's changes are among those written.
   */
  fold(keepBytes = 0): void {
    const states = [...this.pending];
    const kept = new Map<string, Pending>();
    let budget = keepBytes;
    for (let i = states.length - 1; i >= 0 && budget > 0; i--) {
      const [id, state] = states[i]!;
      if (state.row === null) continue;
      if (state.bytes > budget) break;
      kept.set(id, state);
      budget -= state.bytes;
    }
    for (const [id, state] of states) {
      if (kept.has(id)) continue;
      if (state.row) this.write(UPSERT_REQUEST, ...state.row);
      else if (state.removed) {
        if (state.inTable) this.write(DELETE_REQUEST, id);
      } else {
        if (state.prefill) this.write(COMPLETE_PREFILL, ...state.prefill, id);
        if (state.anchorAt !== undefined) this.write(MOVE_ANCHOR, state.anchorAt, id);
      }
    }
    if (this.rows > 0) this.write("DELETE FROM journal");
    this.forget();
    // Oldest first, as they were journaled (a later fold keeps the newest), in rows of ~1 MB.
    this.groups.run(
      () => {
        for (const [id, state] of [...kept].reverse()) {
          this.pending.set(id, state);
          this.putEntry(state.row!, state.bytes);
        }
      },
      () => this.endRow(),
    );
    this.rowsSinceFold = 0;
    this.bytesSinceFold = 0;
  }

  /** Drops every pending change (the tables were emptied). */
  forget(): void {
    this.pending.clear();
    this.entries = [];
    this.blobs = [];
    this.blobBytes = 0;
    this.rowBytes = 0;
    this.rowsSinceFold = 0;
    this.bytesSinceFold = 0;
    this.rows = 0;
  }

  /** The pending state of `id`, created on its first journaled change since the last fold. */
  private stateOf(id: string, inTable: boolean): Pending {
    let state = this.pending.get(id);
    if (!state) {
      // A request not journaled yet is exactly as `requests` holds it: a change to a live one finds
      // its row there; a booking of an id that is not live finds none.
      state = { row: null, bytes: 0, removed: false, inTable };
      this.pending.set(id, state);
    }
    return state;
  }

  /** A put entry for `row`, its prompt's bytes to the row's BLOB. */
  private putEntry(row: RequestValues, bytes: number): void {
    const hashes = row[REQUEST_COLUMN.hashes] as ArrayBuffer;
    const entry = row.map((value, i) =>
      i === REQUEST_COLUMN.worker_id
        ? blobToU64(value as ArrayBuffer).toString()
        : i === REQUEST_COLUMN.hashes
          ? hashes.byteLength / 8
          : (value as string | number | null),
    );
    this.blobs.push(hashes);
    this.blobBytes += hashes.byteLength;
    this.add([PUT, ...entry], bytes);
  }

  private add(entry: Entry, bytes: number): void {
    this.entries.push(entry);
    this.rowBytes += bytes;
    if (!this.groups.open) this.commit();
    else if (this.rowBytes >= ROW_BYTES) this.endRow();
  }

  /**
   * Ends the open row, outside any group, and folds the journal if enough has been written since the
   * last fold, keeping the newest requests.
   */
  private commit(): void {
    this.endRow();
    if (this.rowsSinceFold >= FOLD_ROWS || this.bytesSinceFold >= FOLD_BYTES) this.fold(KEEP_BYTES);
  }

  /** Writes the open row's entries as one journal row. */
  private endRow(): void {
    if (this.entries.length === 0) return;
    let hashes: ArrayBuffer | null = null;
    if (this.blobBytes > 0) {
      const bytes = new Uint8Array(this.blobBytes);
      let at = 0;
      for (const blob of this.blobs) {
        bytes.set(new Uint8Array(blob), at);
        at += blob.byteLength;
      }
      hashes = bytes.buffer;
    }
    this.write("INSERT INTO journal (entries, hashes) VALUES (?, ?)", JSON.stringify(this.entries), hashes);
    this.rows++;
    this.rowsSinceFold++;
    this.bytesSinceFold += this.rowBytes;
    this.entries = [];
    this.blobs = [];
    this.blobBytes = 0;
    this.rowBytes = 0;
  }
}

/**
 * Applies the journal's rows to `requests` in order and deletes them: what a fold would have
 * written. Run before the tracker is read back from `requests`.
 */
export function replayJournal(sql: SqlStorage, write: Write): void {
  let replayed = false;
  for (const row of sql.exec<{ entries: string; hashes: ArrayBuffer | null }>(
    "SELECT entries, hashes FROM journal ORDER BY seq",
  )) {
    replayed = true;
    let at = 0;
    for (const entry of JSON.parse(row.entries) as Entry[]) {
      if (entry[0] === PUT) {
        const values = entry.slice(1) as (string | number | null)[];
        const bytes = (values[REQUEST_COLUMN.hashes] as number) * 8;
        const bindings: SqlStorageValue[] = [...values];
        bindings[REQUEST_COLUMN.worker_id] = u64ToBlob(BigInt(values[REQUEST_COLUMN.worker_id] as string));
        bindings[REQUEST_COLUMN.hashes] = (row.hashes ?? new ArrayBuffer(0)).slice(at, at + bytes);
        at += bytes;
        write(UPSERT_REQUEST, ...bindings);
      } else if (entry[0] === PREFILL) {
        write(COMPLETE_PREFILL, entry[2], entry[3], entry[1]);
      } else if (entry[0] === ANCHOR) write(MOVE_ANCHOR, entry[2], entry[1]);
      else write(DELETE_REQUEST, entry[1]);
    }
  }
  if (replayed) write("DELETE FROM journal");
}
