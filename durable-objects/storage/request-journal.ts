/**
 * Group commit for the `requests` table. A call that changes many requests at once (a `/batch`, a
 * batch of a peer's events) writes its changes as one `journal` row instead of one row per change;
 * every change to a request with a change still in the journal goes to the journal too, so a
 * request's changes are always replayed in order.
 *
 * The journal is a log cleaned from its oldest end, a bounded slice at a time: when a row leaves it
 * past {@link MAX_ROWS} rows or {@link MAX_BYTES}, the oldest rows are *cleaned*. A change that a
 * later row supersedes (a later booking or removal of the same request) is dropped; a removal or
 * update of a request that `requests` holds is written there; a request still live that only the
 * journal holds is written again at its new end (*carried*) while such requests total at most
 * {@link KEEP_BYTES}, and to `requests` past that (the oldest first). Then the cleaned rows are
 * deleted. Requests that live less than about a journal's length never cost a row of their own, and
 * no call cleans much more than it wrote: there is no pause for a whole journal.
 *
 * Durability is unchanged: a journal row commits with the call's other writes, before its answer
 * leaves. `requests` followed by the journal's rows in order is always the tracker's state (a row is
 * cleaned only when it is the oldest); after a restart `replayJournal` (`journal-entries.ts`) applies
 * the rows to `requests` in order, a redo log, before the tracker is read back.
 *
 * Why: SQLite costs ~10 µs and one billed row per row written; a 256-op `/batch` wrote 256 rows.
 * Memory: about MAX_BYTES counted as below plus one cleaning's carries (measured in V8 with 64-hash
 * bookings and frees: 11.6–11.9 MB of heap at the bounds).
 */

import { ANCHOR, type Entry, hashBlobsOf, PREFILL, putEntry, REMOVE, type Write } from "./journal-entries";
import {
  COMPLETE_PREFILL,
  DELETE_REQUEST,
  MOVE_ANCHOR,
  REQUEST_COLUMN,
  type RequestValues,
  UPSERT_REQUEST,
} from "./request-rows";
import { GroupDepth, ROW_BYTES } from "./row-groups";

export { replayJournal, type Write } from "./journal-entries";

/** Journal rows kept before the oldest are cleaned. */
export const MAX_ROWS = 256;
/** Estimated journal bytes kept before the oldest rows are cleaned. */
export const MAX_BYTES = 8 * 1024 * 1024;
/** Estimated bytes of live requests the journal alone holds, past which cleaning writes them to `requests`. */
export const KEEP_BYTES = 4 * 1024 * 1024;

/** Bytes counted per change besides its id and prompt (its state in memory; a put's row 128 more). */
const STATE_BYTES = 128;

/** A request with a change in the journal: what cleaning its rows writes for it. */
interface Pending {
  /** Its whole row while the journal holds its booking; null once removed or written to `requests`. */
  row: RequestValues | null;
  /** Estimated journal bytes of `row`. */
  bytes: number;
  removed: boolean;
  /** `requests` holds a row for this id. */
  inTable: boolean;
  /** Changes to its `requests` row not written there yet. */
  prefill?: [ts: number, origin: string];
  anchorAt?: number;
  /** The journal row of its newest booking or removal (0: none); older changes are superseded. */
  base: number;
  /** The journal row of its newest change: its state is dropped when that row is cleaned. */
  last: number;
}

/** A row of the journal table: its key, estimated bytes, and the requests with a change in it. */
interface JournalRow {
  seq: number;
  bytes: number;
  ids: string[];
}

export class RequestJournal {
  private readonly pending = new Map<string, Pending>();
  private readonly groups = new GroupDepth();
  /** The journal's rows, oldest first. */
  private readonly rows: JournalRow[] = [];
  private rowsBytes = 0;
  /** Estimated bytes of the live requests whose row only the journal holds. */
  private liveBytes = 0;
  /** The open row (written when its group ends or it reaches ~1 MB): its key, entries and prompts. */
  private open!: JournalRow;
  private entries!: Entry[];
  private blobs!: ArrayBuffer[];
  private blobBytes!: number;

  /** @param bounds when the oldest rows are cleaned, and how much of the live requests is carried. */
  constructor(
    private readonly write: Write,
    private readonly bounds = { maxRows: MAX_ROWS, maxBytes: MAX_BYTES, keepBytes: KEEP_BYTES },
  ) {
    this.startRow(1);
  }

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
    if (state.row) this.liveBytes -= state.bytes;
    state.row = row;
    let hashBytes = 0;
    for (const blob of hashBlobsOf(row)) hashBytes += blob.byteLength;
    state.bytes = 2 * id.length + hashBytes + STATE_BYTES + 128;
    state.removed = false;
    state.prefill = undefined;
    state.anchorAt = undefined;
    this.liveBytes += state.bytes;
    this.putEntry(id, state);
  }

  prefillCompleted(id: string, ts: number, origin: string): void {
    const state = this.stateOf(id, true);
    if (state.row) {
      state.row[REQUEST_COLUMN.prefill_done] = 1;
      state.row[REQUEST_COLUMN.prefill_ts] = ts;
      state.row[REQUEST_COLUMN.prefill_origin] = origin;
    } else state.prefill = [ts, origin];
    this.add(id, state, [PREFILL, id, ts, origin], 2 * (id.length + origin.length) + STATE_BYTES);
  }

  anchorMoved(id: string, at: number): void {
    const state = this.stateOf(id, true);
    if (state.row) state.row[REQUEST_COLUMN.anchor_at] = at;
    else state.anchorAt = at;
    this.add(id, state, [ANCHOR, id, at], 2 * id.length + STATE_BYTES);
  }

  removed(id: string): void {
    const state = this.stateOf(id, true);
    if (state.row) this.liveBytes -= state.bytes;
    state.row = null;
    state.removed = true;
    state.prefill = undefined;
    state.anchorAt = undefined;
    state.base = this.open.seq;
    this.add(id, state, [REMOVE, id], 2 * id.length + STATE_BYTES);
  }

  /**
   * Cleans the oldest rows until the journal holds at most `maxRows` rows and `maxBytes`, carrying
   * live requests that only it holds to its end while they total at most `keepBytes`.
   */
  clean(
    maxRows = this.bounds.maxRows,
    maxBytes = this.bounds.maxBytes,
    keepBytes = this.bounds.keepBytes,
  ): void {
    const oldest = this.rows.length;
    let cleaned = 0;
    // Carried bookings go to new rows at the end, which this cleaning leaves alone.
    this.groups.run(
      () => {
        while (cleaned < oldest && (this.rows.length - cleaned > maxRows || this.rowsBytes > maxBytes)) {
          const row = this.rows[cleaned++]!;
          this.rowsBytes -= row.bytes;
          this.cleanRow(row, keepBytes);
        }
      },
      () => this.endRow(),
    );
    this.drop(cleaned);
  }

  /** Empties the journal into `requests`, the open group's changes included. */
  fold(): void {
    this.endRow();
    for (const row of this.rows) this.cleanRow(row, -1);
    this.drop(this.rows.length);
    this.rowsBytes = 0;
  }

  /** Drops every pending change (the tables were emptied). */
  forget(): void {
    this.pending.clear();
    this.rows.length = 0;
    this.rowsBytes = 0;
    this.liveBytes = 0;
    this.startRow(1);
  }

  /**
   * Applies what the oldest row `row` holds to `requests`, or carries its live requests while those
   * the journal alone holds fit in `keepBytes`, leaving out what later rows supersede.
   */
  private cleanRow(row: JournalRow, keepBytes: number): void {
    for (const id of row.ids) {
      const state = this.pending.get(id);
      if (!state || state.base > row.seq) continue;
      if (state.row) {
        if (this.liveBytes <= keepBytes) {
          this.putEntry(id, state);
          continue;
        }
        this.write(UPSERT_REQUEST, ...state.row);
        this.liveBytes -= state.bytes;
        state.row = null;
        state.inTable = true;
      } else if (state.removed) {
        if (state.inTable) this.write(DELETE_REQUEST, id);
        state.removed = false;
        state.inTable = false;
      } else {
        if (state.prefill) this.write(COMPLETE_PREFILL, ...state.prefill, id);
        if (state.anchorAt !== undefined) this.write(MOVE_ANCHOR, state.anchorAt, id);
      }
      state.prefill = undefined;
      state.anchorAt = undefined;
      state.base = 0;
      if (state.last === row.seq) this.pending.delete(id);
    }
  }

  /** Deletes the oldest `count` rows, already cleaned. */
  private drop(count: number): void {
    if (count === 0) return;
    this.write("DELETE FROM journal WHERE seq <= ?", this.rows[count - 1]!.seq);
    this.rows.splice(0, count);
  }

  /** The pending state of `id`, created on its first journaled change since it was last cleaned. */
  private stateOf(id: string, inTable: boolean): Pending {
    let state = this.pending.get(id);
    if (!state) {
      // A request not journaled yet is exactly as `requests` holds it: a change to a live one finds
      // its row there; a booking of an id that is not live finds none.
      state = { row: null, bytes: 0, removed: false, inTable, base: 0, last: 0 };
      this.pending.set(id, state);
    }
    return state;
  }

  /** A put entry for `state`'s row, its hashes' bytes to the row's BLOB. */
  private putEntry(id: string, state: Pending): void {
    for (const blob of hashBlobsOf(state.row!)) {
      this.blobs.push(blob);
      this.blobBytes += blob.byteLength;
    }
    state.base = this.open.seq;
    this.add(id, state, putEntry(state.row!), state.bytes);
  }

  private add(id: string, state: Pending, entry: Entry, bytes: number): void {
    this.entries.push(entry);
    this.open.bytes += bytes;
    if (state.last !== this.open.seq) {
      state.last = this.open.seq;
      this.open.ids.push(id);
    }
    if (!this.groups.open) this.commit();
    else if (this.open.bytes >= ROW_BYTES) this.endRow();
  }

  /** Ends the open row, outside any group, and cleans the oldest rows if the journal is over its bounds. */
  private commit(): void {
    this.endRow();
    if (this.rows.length > this.bounds.maxRows || this.rowsBytes > this.bounds.maxBytes) this.clean();
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
    const row = this.open;
    this.write(
      "INSERT INTO journal (seq, entries, hashes) VALUES (?, ?, ?)",
      row.seq,
      JSON.stringify(this.entries),
      hashes,
    );
    this.rows.push(row);
    this.rowsBytes += row.bytes;
    this.startRow(row.seq + 1);
  }

  private startRow(seq: number): void {
    this.open = { seq, bytes: 0, ids: [] };
    this.entries = [];
    this.blobs = [];
    this.blobBytes = 0;
  }
}
