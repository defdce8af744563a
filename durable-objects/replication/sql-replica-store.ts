import type { EventKey, HybridClock } from "../core/clock";
import type { DepartureLog, TimelineEvent } from "../core/departure-log";
import type { AddEvent, RegisterEvent } from "../core/events";
import type { RecordKind, ReplicaRecords } from "../core/replica-records";
import { storeName } from "../identity";
import { decodeEvent, encodeEvent } from "./event-codec";
import type { StreamPosition } from "./inbox";
import { OutboxTail } from "./outbox-tail";
import type { EventLog } from "./types";

/**
 * SQLite side of replication: the outbox (this replica's events, encoded once, kept until every
 * peer acknowledged them), peer cursors, the applied position of each origin's stream, and the
 * replication records. Every write is synchronous, so an event is in the outbox in the same
 * implicit transaction as the change it describes, and an applied batch's position with its effects.
 * The newest outbox row is never trimmed: its sequence number is the replica's last, and must
 * survive a restart (a reused number would be taken for a duplicate by the peers).
 * `timeline` holds the prefill timelines (`core/departure-log.ts`), keyed by the change's key alone
 * (keys are unique per change), so that its purge by age is a range of the primary key.
 */
const TIMELINE_SCHEMA = `
CREATE TABLE IF NOT EXISTS timeline (
  ts REAL NOT NULL, origin TEXT NOT NULL, event BLOB NOT NULL, PRIMARY KEY (ts, origin)
) WITHOUT ROWID;
`;
const REPLICA_SCHEMA = `${TIMELINE_SCHEMA}
CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, event BLOB NOT NULL, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS peers (
  name TEXT PRIMARY KEY, acked INTEGER NOT NULL, resync INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS origins (
  origin TEXT PRIMARY KEY, incarnation TEXT NOT NULL, applied INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS records (
  kind TEXT NOT NULL, id TEXT NOT NULL, ts REAL NOT NULL, origin TEXT NOT NULL, PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS held (
  kind TEXT NOT NULL, id TEXT NOT NULL, event BLOB NOT NULL, PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS replica_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
`;

type HeldKind = "orphan" | "excluded";

export class SqlReplicaStore implements EventLog<Uint8Array> {
  private ready = false;
  /** The incarnation to persist with the first outbox row, when none is stored yet. */
  private unsavedIncarnation: string | null = null;
  /** The newest outbox entries in memory too, so shipping them reads nothing back. */
  private readonly tail = new OutboxTail();

  /** @param name the object's name, stored with the schema (see `identity.ts`). */
  constructor(
    private readonly sql: SqlStorage,
    private readonly name: string,
  ) {
    this.ready = sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'outbox'").toArray().length > 0;
    // Storage written before timelines existed.
    if (this.ready) sql.exec(TIMELINE_SCHEMA);
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

  lastSeq(): number {
    if (!this.ready) return 0;
    return Number(this.sql.exec("SELECT coalesce(max(seq), 0) AS s FROM outbox").one().s);
  }

  append(seq: number, entry: Uint8Array, at: number): void {
    this.ensure();
    if (this.unsavedIncarnation !== null) {
      this.sql.exec(
        "INSERT INTO replica_meta (key, value) VALUES ('incarnation', ?)",
        this.unsavedIncarnation,
      );
      this.unsavedIncarnation = null;
    }
    this.sql.exec("INSERT INTO outbox (seq, event, at) VALUES (?, ?, ?)", seq, bytesOf(entry), at);
    this.tail.push(seq, entry, at);
  }

  read(afterSeq: number, max: number): { seq: number; entry: Uint8Array }[] {
    if (!this.ready) return [];
    const recent = this.tail.read(afterSeq, max);
    if (recent !== null) return recent;
    return this.sql
      .exec<{ seq: number; event: ArrayBuffer }>(
        "SELECT seq, event FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
        afterSeq,
        max,
      )
      .toArray()
      .map((row) => ({ seq: row.seq, entry: new Uint8Array(row.event) }));
  }

  trim(seq: number): void {
    if (!this.ready) return;
    this.tail.trim(seq);
    this.sql.exec("DELETE FROM outbox WHERE seq <= ? AND seq < (SELECT max(seq) FROM outbox)", seq);
  }

  appendedAt(seq: number): number | undefined {
    if (!this.ready) return undefined;
    const recent = this.tail.appendedAt(seq);
    if (recent !== null) return recent;
    const row = this.sql.exec("SELECT at FROM outbox WHERE seq = ?", seq).toArray()[0];
    return row ? Number(row.at) : undefined;
  }

  oldest(): number {
    if (!this.ready) return 1;
    return Number(this.sql.exec("SELECT coalesce(min(seq), 1) AS s FROM outbox").one().s);
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
    this.ensure();
    this.sql.exec(
      "INSERT OR REPLACE INTO records (kind, id, ts, origin) VALUES (?, ?, ?, ?)",
      kind,
      id,
      key.ts,
      key.origin,
    );
  }

  recordCleared(kind: RecordKind, id: string): void {
    if (this.ready) this.sql.exec("DELETE FROM records WHERE kind = ? AND id = ?", kind, id);
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
    this.ensure();
    this.sql.exec(
      "INSERT OR REPLACE INTO timeline (ts, origin, event) VALUES (?, ?, ?)",
      event.ts,
      event.origin,
      bytesOf(encodeEvent(event)),
    );
  }

  timelinePurged(beforeTs: number): void {
    if (this.ready) this.sql.exec("DELETE FROM timeline WHERE ts < ?", beforeTs);
  }

  /** Loads the replication records and prefill timelines into memory (without writing them back). */
  hydrate(records: ReplicaRecords, clock: HybridClock, departures: DepartureLog | null): void {
    if (!this.ready) return;
    const rows = this.sql.exec<{ kind: RecordKind; id: string; ts: number; origin: string }>(
      "SELECT kind, id, ts, origin FROM records",
    );
    for (const { kind, id, ts, origin } of rows) {
      clock.observe(ts);
      const key = { ts, origin };
      if (kind === "free") records.freed.set(id, key);
      else if (kind === "prefill") records.marks.set(id, key);
      else records.gone.set(BigInt(id), key);
    }
    for (const row of this.sql.exec<{ kind: HeldKind; event: ArrayBuffer }>("SELECT kind, event FROM held")) {
      const event = decodeEvent(new Uint8Array(row.event));
      clock.observe(event.ts);
      if (event.type === "add") records.orphans.set(event.requestId, event);
      else if (event.type === "register") records.excluded.set(event.workerId, event);
    }
    if (!departures) return;
    for (const row of this.sql.exec<{ event: ArrayBuffer }>("SELECT event FROM timeline")) {
      const event = decodeEvent(new Uint8Array(row.event));
      clock.observe(event.ts);
      if (event.type === "add" || event.type === "free" || event.type === "prefill_complete") {
        departures.restore(event);
      }
    }
  }

  private ensure(): void {
    if (this.ready) return;
    this.sql.exec(REPLICA_SCHEMA);
    storeName(this.sql, this.name);
    this.ready = true;
  }
}

/** The bytes as an ArrayBuffer of exactly their length (SQLite binds ArrayBuffers). */
function bytesOf(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength)
    return bytes.buffer as ArrayBuffer;
  return bytes.slice().buffer as ArrayBuffer;
}
