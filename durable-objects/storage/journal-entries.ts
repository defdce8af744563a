/**
 * The request journal's rows (`request-journal.ts`): one JSON array of entries, each a change to one
 * request, and one BLOB of the prompts of its bookings in entry order; and their replay into
 * `requests` after a restart.
 */
import {
  COMPLETE_PREFILL,
  DELETE_REQUEST,
  MOVE_ANCHOR,
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
 * the worker id as a decimal string and the prompt as its hash count (its bytes are in the row's
 * `hashes` BLOB, in entry order).
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
  entry[1 + REQUEST_COLUMN.hashes] = (row[REQUEST_COLUMN.hashes] as ArrayBuffer).byteLength / 8;
  return entry;
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
        bindings[REQUEST_COLUMN.worker_id] = workerIdBlob(BigInt(values[REQUEST_COLUMN.worker_id] as string));
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
