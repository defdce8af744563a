/**
 * The replication records (`core/replica/replica-records.ts`) in SQLite. Unregistrations are kept for good,
 * one `records` row each. Tombstones and early prefill marks (a request id's newest free or prefill
 * completion, kept one expiry age) are a log instead: the record changes of one call (a `/batch`, a
 * peer's batch, a single call) are one `record_log` row of JSON entries — a set with its key, a clear —
 * keyed by the newest physical time of any key the row names (a clear names the key it clears) and a
 * row number. Restoring replays the rows in order. The purge by age deletes the rows all of whose keys
 * are past the horizon: so a set whose clear was deleted can come back only if its own key is past
 * it, and the tracker purges such a record before it merges anything (its first `expire` purges).
 * That holds because a record's key only moves forward between clears (every set is of a newer key).
 *
 * Why: a row per free (and per mark set and cleared) was a sixth of the origin's time and a third of
 * a peer's under a replicated `/batch` load. `records` rows of these kinds written before the log are
 * read first and purged by range.
 */
import { type EventKey, firstTsOf, type HybridClock, physicalMs } from "../core/replica/clock";
import type { ReplicaRecords } from "../core/replica/replica-records";
import type { RecordKind } from "../core/store";
import { GroupDepth, ROW_BYTES } from "../storage/row-groups";

export const RECORDS_SCHEMA = `
CREATE TABLE IF NOT EXISTS records (
  kind TEXT NOT NULL, id TEXT NOT NULL, ts REAL NOT NULL, origin TEXT NOT NULL, PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS record_log (
  ms REAL NOT NULL, n INTEGER NOT NULL, entries TEXT NOT NULL, PRIMARY KEY (ms, n)
) WITHOUT ROWID;
`;

type LoggedKind = Exclude<RecordKind, "gone">;
/** A record set (with its key) or cleared. */
type Entry = [LoggedKind, string, number, string] | [LoggedKind, string];

export class SqlRecords {
  private readonly groups = new GroupDepth();
  private entries: Entry[] = [];
  /** The open row's newest physical time, and its estimated JSON bytes. */
  private ms = Number.NEGATIVE_INFINITY;
  private bytes = 0;
  /** Number of the last row written; read from storage on first use. */
  private lastRow: number | null = null;

  /**
   * @param ensure creates the replication tables if they are not there yet
   * @param ready whether they are there
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly ensure: () => void,
    private readonly ready: () => boolean,
  ) {}

  /** Runs `fn` with the record changes it makes written as one row (a few past ~1 MB) when it returns. */
  group<T>(fn: () => T): T {
    return this.groups.run(fn, () => this.endRow());
  }

  set(kind: RecordKind, id: string, key: EventKey): void {
    this.ensure();
    if (kind === "gone") {
      this.sql.exec(
        "INSERT OR REPLACE INTO records (kind, id, ts, origin) VALUES (?, ?, ?, ?)",
        kind,
        id,
        key.ts,
        key.origin,
      );
    } else this.add([kind, id, key.ts, key.origin], key, 3 * (id.length + key.origin.length) + 40);
  }

  /** Record `kind` of `id`, whose key was `key`, is gone. */
  cleared(kind: RecordKind, id: string, key: EventKey): void {
    if (!this.ready()) return;
    if (kind === "gone") this.sql.exec("DELETE FROM records WHERE kind = ? AND id = ?", kind, id);
    else this.add([kind, id], key, 3 * id.length + 16);
  }

  /** Forgets tombstones and marks whose keys are older than `beforeMs` (physical ms). */
  purge(beforeMs: number): void {
    if (!this.ready()) return;
    this.sql.exec("DELETE FROM record_log WHERE ms < ?", beforeMs);
    // Rows of the table from before the log.
    this.sql.exec("DELETE FROM records WHERE kind != 'gone' AND ts < ?", firstTsOf(beforeMs));
  }

  /** Loads the records into memory: the table's rows, then the log's in the order written. */
  restore(records: ReplicaRecords, clock: HybridClock): void {
    const mapOf = (kind: LoggedKind) => (kind === "free" ? records.freed : records.marks);
    const rows = this.sql.exec<{ kind: RecordKind; id: string; ts: number; origin: string }>(
      "SELECT kind, id, ts, origin FROM records",
    );
    for (const { kind, id, ts, origin } of rows) {
      clock.observe(ts);
      if (kind === "gone") records.gone.set(BigInt(id), { ts, origin });
      else mapOf(kind).set(id, { ts, origin });
    }
    for (const row of this.sql.exec<{ entries: string }>("SELECT entries FROM record_log ORDER BY n")) {
      for (const entry of JSON.parse(row.entries) as Entry[]) {
        if (entry.length === 2) mapOf(entry[0]).delete(entry[1]);
        else {
          clock.observe(entry[2]);
          mapOf(entry[0]).set(entry[1], { ts: entry[2], origin: entry[3] });
        }
      }
    }
  }

  private add(entry: Entry, key: EventKey, bytes: number): void {
    this.entries.push(entry);
    this.ms = Math.max(this.ms, physicalMs(key.ts));
    this.bytes += bytes;
    if (!this.groups.open || this.bytes >= ROW_BYTES) this.endRow();
  }

  private endRow(): void {
    if (this.entries.length === 0) return;
    this.lastRow ??= Number(this.sql.exec("SELECT coalesce(max(n), 0) AS n FROM record_log").one().n);
    this.sql.exec(
      "INSERT INTO record_log (ms, n, entries) VALUES (?, ?, ?)",
      this.ms,
      ++this.lastRow,
      JSON.stringify(this.entries),
    );
    this.entries = [];
    this.ms = Number.NEGATIVE_INFINITY;
    this.bytes = 0;
  }
}
