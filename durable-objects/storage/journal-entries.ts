/**
 * The request journal's rows (`request-journal.ts`): one JSON array of entries, each a change to one
 * request, and one BLOB of the prompts of its bookings in entry order; and their replay into
 * `requests` after a restart.
 */
import {
  COMPLETE_PREFILL,
  DELETE_REQUEST,
  HASH_COLUMNS,
  MOVE_ANCHOR,
  OWNER_COLUMNS_FROM,
  REQUEST_COLUMN,
  type RequestValues,
  UPSERT_REQUEST,
} from "./request-rows";
import { blobDecimal, workerIdBlob } from "./u64";

export type Write = (query: string, ...bindings: SqlStorageValue[]) => void;

export const PUT = 0;
export const PREFILL = 1;
export const ANCHOR = 2;
export const REMOVE = 3;

/**
 * One journaled change, as JSON: a put carries every column of {@link REQUEST_COLUMN} in order, with
 * the worker id as a decimal string and each hash column ({@link HASH_COLUMNS}) as its hash count, or
 * null (its bytes are in the row's `hashes` BLOB, in entry order, then column order). A put written
 * before the cache or owner columns existed is shorter: its missing columns read as NULL, and so an
 * unowned put leaves its three owner columns off, to stay as long as it was before leases.
 */
export type Entry =
  | [typeof PUT, ...(string | number | null)[]]
  | [typeof PREFILL, string, number, string]
  | [typeof ANCHOR, string, number]
  | [typeof REMOVE, string];

/** The put entry of a booking's row (its prompt's bytes go to the row's BLOB). */
export function putEntry(row: RequestValues): Entry {
  const entry: Entry = [PUT];
  for (const value of row) entry.push(value as string | number | null);
  entry[1 + REQUEST_COLUMN.worker_id] = blobDecimal(row[REQUEST_COLUMN.worker_id] as ArrayBuffer);
  for (const column of HASH_COLUMNS) {
    const blob = row[REQUEST_COLUMN[column]] as ArrayBuffer | null;
    entry[1 + REQUEST_COLUMN[column]] = blob === null ? null : blob.byteLength / 8;
  }
  if (row[REQUEST_COLUMN.owner] === null) entry.length = 1 + OWNER_COLUMNS_FROM;
  return entry;
}

/** A put row's hash BLOBs, in the order the journal row's BLOB holds them. */
export function hashBlobsOf(row: RequestValues): ArrayBuffer[] {
  const blobs: ArrayBuffer[] = [];
  for (const column of HASH_COLUMNS) {
    const blob = row[REQUEST_COLUMN[column]] as ArrayBuffer | null;
    if (blob !== null) blobs.push(blob);
  }
  return blobs;
}

const COLUMN_COUNT = Object.keys(REQUEST_COLUMN).length;

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
        while (values.length < COLUMN_COUNT) values.push(null);
        const bindings: SqlStorageValue[] = [...values];
        bindings[REQUEST_COLUMN.worker_id] = workerIdBlob(BigInt(values[REQUEST_COLUMN.worker_id] as string));
        for (const column of HASH_COLUMNS) {
          const count = values[REQUEST_COLUMN[column]] as number | null;
          if (count === null) continue;
          bindings[REQUEST_COLUMN[column]] = (row.hashes ?? new ArrayBuffer(0)).slice(at, at + count * 8);
          at += count * 8;
        }
        write(UPSERT_REQUEST, ...bindings);
      } else if (entry[0] === PREFILL) {
        write(COMPLETE_PREFILL, entry[2], entry[3], entry[1]);
      } else if (entry[0] === ANCHOR) write(MOVE_ANCHOR, entry[2], entry[1]);
      else write(DELETE_REQUEST, entry[1]);
    }
  }
  if (replayed) write("DELETE FROM journal");
}
