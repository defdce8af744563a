import type { EventKey, HybridClock } from "../core/replica/clock";
import type { DepartureLog } from "../core/replica/departure-log";
import type { AddEvent, RegisterEvent, TimelineEvent } from "../core/replica/events";
import type { ReplicaRecords } from "../core/replica/replica-records";
import type { RecordKind } from "../core/store";
import { storeName } from "../storage/identity";
import { decodeEvent, encodeEvent } from "./event-codec";
import type { StreamPosition } from "./inbox";
import { bytesOf } from "../storage/row-groups";
import { OUTBOX_SCHEMA, SqlOutbox } from "./sql-outbox";
import { RECORDS_SCHEMA, SqlRecords } from "./sql-records";
import { SqlTimeline, TIMELINE_SCHEMA } from "./sql-timeline";

/**
 * SQLite side of replication: the outbox (this replica's events, encoded once, kept until every
 * peer acknowledged them), peer cursors, the applied position of each origin's stream, and the
 * replication records. Every write is synchronous, so an event is in the outbox in the same
 * implicit transaction as the change it describes, and an applied batch's position with its effects.
 * The outbox itself is `sql-outbox.ts`.
 * The prefill timelines are `sql-timeline.ts`, the records `sql-records.ts`.
 */
const REPLICA_SCHEMA = `${TIMELINE_SCHEMA}
${RECORDS_SCHEMA}
${OUTBOX_SCHEMA}
CREATE TABLE IF NOT EXISTS peers (
  name TEXT PRIMARY KEY, acked INTEGER NOT NULL, resync INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS origins (
  origin TEXT PRIMARY KEY, incarnation TEXT NOT NULL, applied INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS held (
  kind TEXT NOT NULL, id TEXT NOT NULL, event BLOB NOT NULL, PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS replica_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
`;

type HeldKind = "orphan" | "excluded";

export class SqlReplicaStore {
  private ready = false;
  /** The incarnation to persist with the first outbox row, when none is stored yet. */
  private unsavedIncarnation: string | null = null;
  /** This replica's events, kept until every peer acknowledged them. */
  readonly outbox: SqlOutbox;
  private readonly timeline: SqlTimeline;
  private readonly records: SqlRecords;

  /** @param name the object's name, stored with the schema (see `identity.ts`). */
  constructor(
    private readonly sql: SqlStorage,
    private readonly name: string,
  ) {
    this.ready = sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'outbox'").toArray().length > 0;
    // Storage written before timelines or the record log existed.
    if (this.ready) sql.exec(TIMELINE_SCHEMA + RECORDS_SCHEMA);
    this.outbox = new SqlOutbox(
      sql,
      () => this.ready,
      () => this.beforeFirstEvent(),
    );
    this.timeline = new SqlTimeline(sql, () => this.ensure());
    this.records = new SqlRecords(
      sql,
      () => this.ensure(),
      () => this.ready,
    );
  }

  /**
   * This replica's incarnation: random, made with its replication storage and kept for its life.
   * A new one is persisted with the first event (an object that is only read stores nothing).
   */
  incarnation(): string {
    const row = this.ready
      ? this.sql.exec("SELECT value FROM replica_meta WHERE key = 'incarnation'").toArray()[0]
      : undefined;
    if (row) return String(row.value);
    this.unsavedIncarnation = crypto.randomUUID();
    return this.unsavedIncarnation;
  }

  peers(): { name: string; acked: number; resync: boolean }[] {
    if (!this.ready) return [];
    return this.sql
      .exec<{ name: string; acked: number; resync: number }>("SELECT name, acked, resync FROM peers")
      .toArray()
      .map((row) => ({ name: row.name, acked: row.acked, resync: row.resync !== 0 }));
  }

  savePeer(name: string, acked: number, resync: boolean): void {
    this.ensure();
    this.sql.exec(
      "INSERT OR REPLACE INTO peers (name, acked, resync) VALUES (?, ?, ?)",
      name,
      acked,
      resync ? 1 : 0,
    );
  }

  origins(): [string, StreamPosition][] {
    if (!this.ready) return [];
    return this.sql
      .exec<{ origin: string; incarnation: string; applied: number }>("SELECT * FROM origins")
      .toArray()
      .map((row) => [row.origin, { incarnation: row.incarnation, applied: row.applied }]);
  }

  saveOrigin(origin: string, position: StreamPosition): void {
    this.ensure();
    this.sql.exec(
      "INSERT OR REPLACE INTO origins (origin, incarnation, applied) VALUES (?, ?, ?)",
      origin,
      position.incarnation,
      position.applied,
    );
  }

  recordSet(kind: RecordKind, id: string, key: EventKey): void {
    this.records.set(kind, id, key);
  }

  recordCleared(kind: RecordKind, id: string, key: EventKey): void {
    this.records.cleared(kind, id, key);
  }

  recordsPurged(beforeMs: number): void {
    this.records.purge(beforeMs);
  }

  held(kind: HeldKind, id: string, event: AddEvent | RegisterEvent): void {
    this.ensure();
    this.sql.exec(
      "INSERT OR REPLACE INTO held (kind, id, event) VALUES (?, ?, ?)",
      kind,
      id,
      bytesOf(encodeEvent(event)),
    );
  }

  released(kind: HeldKind, id: string): void {
    if (this.ready) this.sql.exec("DELETE FROM held WHERE kind = ? AND id = ?", kind, id);
  }

  timelineSet(event: TimelineEvent): void {
    this.timeline.set(event);
  }

  timelinePurged(beforeTs: number): void {
    if (this.ready) this.timeline.purge(beforeTs);
  }

  /**
   * Runs a call that changes many requests with its events as one outbox row, the timeline changes
   * it keeps as one timeline row and its record changes as one record log row.
   */
  group<T>(fn: () => T): T {
    return this.outbox.group(() => this.timeline.group(() => this.records.group(fn)));
  }

  /** Loads the replication records and prefill timelines into memory (without writing them back). */
  hydrate(records: ReplicaRecords, clock: HybridClock, departures: DepartureLog | null): void {
    if (!this.ready) return;
    this.records.restore(records, clock);
    for (const row of this.sql.exec<{ kind: HeldKind; event: ArrayBuffer }>("SELECT kind, event FROM held")) {
      const event = decodeEvent(new Uint8Array(row.event));
      clock.observe(event.ts);
      if (event.type === "add") records.orphans.set(event.requestId, event);
      else if (event.type === "register") records.excluded.set(event.workerId, event);
    }
    if (!departures) return;
    this.timeline.restore(departures, clock);
  }

  /** Creates the replication tables and stores the incarnation, with the first event. */
  private beforeFirstEvent(): void {
    this.ensure();
    if (this.unsavedIncarnation !== null) {
      this.sql.exec(
        "INSERT INTO replica_meta (key, value) VALUES ('incarnation', ?)",
        this.unsavedIncarnation,
      );
      this.unsavedIncarnation = null;
    }
  }

  private ensure(): void {
    if (this.ready) return;
    this.sql.exec(REPLICA_SCHEMA);
    storeName(this.sql, this.name);
    this.ready = true;
  }
}
