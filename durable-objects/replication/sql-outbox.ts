/**
 * The replication outbox in SQLite: this replica's events, encoded once, kept until every peer
 * acknowledged them. A row holds `count` consecutive events from sequence number `seq`: one event as
 * it is, or the events of one grouped call (a `/batch`, `group`) each behind a 4-byte length, so such
 * a call writes one outbox row, not one per event. The newest row is never trimmed: its last sequence
 * number is the replica's last, and must survive a restart (a reused number would be taken for a
 * duplicate by the peers). Every write is synchronous, so an event is in the outbox in the same
 * implicit transaction as the change it describes.
 */
import { bytesOf, GroupDepth, joinEntries, rowRuns, splitEntries } from "../storage/row-groups";
import { OutboxTail } from "./outbox-tail";
import type { EventLog } from "./types";

export const OUTBOX_SCHEMA = `CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY, event BLOB NOT NULL, at INTEGER NOT NULL, count INTEGER NOT NULL DEFAULT 1
);`;

export class SqlOutbox implements EventLog<Uint8Array> {
  /** The newest entries in memory too, so shipping them reads nothing back. */
  private readonly tail = new OutboxTail();
  /** While a group is open, appended events wait in `grouped`. */
  private readonly groups = new GroupDepth();
  private grouped: { seq: number; entry: Uint8Array; at: number }[] = [];

  /**
   * @param ready whether the replication tables exist (they are created with the first event)
   * @param beforeFirstEvent creates the replication tables (and stores what goes with them)
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly ready: () => boolean,
    private readonly beforeFirstEvent: () => void,
  ) {
    if (!ready()) return;
    // Storage written before grouped rows existed.
    const columns = sql.exec<{ name: string }>("PRAGMA table_info(outbox)").toArray();
    if (!columns.some((column) => column.name === "count")) {
      sql.exec("ALTER TABLE outbox ADD COLUMN count INTEGER NOT NULL DEFAULT 1");
    }
  }

  lastSeq(): number {
    if (!this.ready()) return 0;
    const row = this.sql
      .exec("SELECT seq + count - 1 AS last FROM outbox ORDER BY seq DESC LIMIT 1")
      .toArray()[0];
    return row ? Number(row.last) : 0;
  }

  /** Runs `fn` with the events it appends written as one outbox row (a few past ~1 MB) when it returns. */
  group<T>(fn: () => T): T {
    return this.groups.run(fn, () => this.writeGroup());
  }

  append(seq: number, entry: Uint8Array, at: number): void {
    this.beforeFirstEvent();
    this.tail.push(seq, entry, at);
    if (this.groups.open) this.grouped.push({ seq, entry, at });
    else this.writeRow(seq, 1, bytesOf(entry), at);
  }

  read(afterSeq: number, max: number): { seq: number; entry: Uint8Array }[] {
    if (!this.ready()) return [];
    const recent = this.tail.read(afterSeq, max);
    if (recent !== null) return recent;
    type Row = { seq: number; count: number; event: ArrayBuffer };
    const out: { seq: number; entry: Uint8Array }[] = [];
    const take = (row: Row) => {
      const entries = row.count === 1 ? [new Uint8Array(row.event)] : splitEntries(row.event, row.count);
      for (let i = 0; i < entries.length && out.length < max; i++) {
        if (row.seq + i > afterSeq) out.push({ seq: row.seq + i, entry: entries[i]! });
      }
    };
    // The row holding `afterSeq + 1` may start before it; the rows after it are read one at a time
    // (the cursor is lazy) until `max` entries are taken: a grouped row can hold thousands.
    const first = "SELECT seq, count, event FROM outbox WHERE seq <= ? ORDER BY seq DESC LIMIT 1";
    for (const row of this.sql.exec<Row>(first, afterSeq + 1)) take(row);
    if (out.length >= max) return out;
    for (const row of this.sql.exec<Row>(
      "SELECT seq, count, event FROM outbox WHERE seq > ? ORDER BY seq",
      afterSeq + 1,
    )) {
      take(row);
      if (out.length >= max) break;
    }
    return out;
  }

  trim(seq: number): void {
    if (!this.ready()) return;
    this.tail.trim(seq);
    // `seq <= ?` bounds the scan by the key; the rest keeps rows that end past the cut, and the newest.
    this.sql.exec(
      "DELETE FROM outbox WHERE seq <= ? AND seq + count - 1 <= ? AND seq < (SELECT max(seq) FROM outbox)",
      seq,
      seq,
    );
  }

  appendedAt(seq: number): number | undefined {
    if (!this.ready()) return undefined;
    const recent = this.tail.appendedAt(seq);
    if (recent !== null) return recent;
    const row = this.sql
      .exec<{ at: number; last: number }>(
        "SELECT at, seq + count - 1 AS last FROM outbox WHERE seq <= ? ORDER BY seq DESC LIMIT 1",
        seq,
      )
      .toArray()[0];
    return row && row.last >= seq ? Number(row.at) : undefined;
  }

  oldest(): number {
    if (!this.ready()) return 1;
    return Number(this.sql.exec("SELECT coalesce(min(seq), 1) AS s FROM outbox").one().s);
  }

  /** Writes the open group's events as one row, or a few of at most `ROW_BYTES` each. */
  private writeGroup(): void {
    const events = this.grouped;
    this.grouped = [];
    for (const [from, to, size] of rowRuns(events)) {
      const { seq, entry, at } = events[from]!;
      if (to - from === 1) this.writeRow(seq, 1, bytesOf(entry), at);
      else this.writeRow(seq, to - from, joinEntries(events, from, to, size), at);
    }
  }

  private writeRow(seq: number, count: number, event: ArrayBuffer, at: number): void {
    this.sql.exec("INSERT INTO outbox (seq, event, at, count) VALUES (?, ?, ?, ?)", seq, event, at, count);
  }
}
