/**
 * The prefill timelines (`core/replica/departure-log.ts`) in SQLite. A change kept alone is a `timeline` row
 * keyed by the change's key (unique per change), so that the purge by age is a range of the key. The
 * changes kept by one grouped call (a `/batch`, a peer's batch) are one `timeline_groups` row instead,
 * keyed by the newest change's time: the purge deletes a group once all of it is old, and a group
 * that is partly old comes back on a restart with changes the log forgets again at its next prune
 * (too old to move an anchor). Restoring is idempotent, so a change stored twice is harmless.
 */
import type { HybridClock } from "../core/replica/clock";
import type { DepartureLog } from "../core/replica/departure-log";
import type { TimelineEvent } from "../core/replica/events";
import { decodeEvent, encodeEvent } from "./event-codec";
import { bytesOf, GroupDepth, joinEntries, rowRuns, splitEntries } from "../storage/row-groups";

export const TIMELINE_SCHEMA = `
CREATE TABLE IF NOT EXISTS timeline (
  ts REAL NOT NULL, origin TEXT NOT NULL, event BLOB NOT NULL, PRIMARY KEY (ts, origin)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS timeline_groups (
  ts REAL NOT NULL, n INTEGER NOT NULL, count INTEGER NOT NULL, events BLOB NOT NULL, PRIMARY KEY (ts, n)
) WITHOUT ROWID;
`;

export class SqlTimeline {
  private readonly groups = new GroupDepth();
  private grouped: { ts: number; entry: Uint8Array }[] = [];
  /** Number of the next group row (unique with its time); read from storage on first use. */
  private nextGroup: number | null = null;

  /** @param ensure creates the replication tables if they are not there yet */
  constructor(
    private readonly sql: SqlStorage,
    private readonly ensure: () => void,
  ) {}

  /** Runs `fn` with the changes it keeps written as one row (a few past ~1 MB) when it returns. */
  group<T>(fn: () => T): T {
    return this.groups.run(fn, () => this.writeGroup());
  }

  set(event: TimelineEvent): void {
    this.ensure();
    const entry = encodeEvent(event);
    if (this.groups.open) this.grouped.push({ ts: event.ts, entry });
    else {
      this.sql.exec(
        "INSERT OR REPLACE INTO timeline (ts, origin, event) VALUES (?, ?, ?)",
        event.ts,
        event.origin,
        bytesOf(entry),
      );
    }
  }

  purge(beforeTs: number): void {
    this.sql.exec("DELETE FROM timeline WHERE ts < ?", beforeTs);
    this.sql.exec("DELETE FROM timeline_groups WHERE ts < ?", beforeTs);
  }

  /** Enters every stored change into `departures`. */
  restore(departures: DepartureLog, clock: HybridClock): void {
    const restore = (bytes: Uint8Array) => {
      const event = decodeEvent(bytes);
      clock.observe(event.ts);
      if (event.type === "add" || event.type === "free" || event.type === "prefill_complete") {
        departures.restore(event);
      }
    };
    for (const row of this.sql.exec<{ event: ArrayBuffer }>("SELECT event FROM timeline")) {
      restore(new Uint8Array(row.event));
    }
    const groups = this.sql.exec<{ count: number; events: ArrayBuffer }>(
      "SELECT count, events FROM timeline_groups",
    );
    for (const row of groups) for (const bytes of splitEntries(row.events, row.count)) restore(bytes);
  }

  private writeGroup(): void {
    const events = this.grouped;
    this.grouped = [];
    if (events.length === 0) return;
    this.nextGroup ??= Number(this.sql.exec("SELECT coalesce(max(n), 0) AS n FROM timeline_groups").one().n);
    for (const [from, to, size] of rowRuns(events)) {
      let ts = Number.NEGATIVE_INFINITY;
      for (let i = from; i < to; i++) ts = Math.max(ts, events[i]!.ts);
      this.sql.exec(
        "INSERT INTO timeline_groups (ts, n, count, events) VALUES (?, ?, ?, ?)",
        ts,
        ++this.nextGroup,
        to - from,
        joinEntries(events, from, to, size),
      );
    }
  }
}
