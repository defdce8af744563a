/**
 * The replication outbox in a real object's SQLite: a grouped call's events are one row, and a
 * store that starts over (an empty in-memory tail, as after a restart) reads, dates, trims and
 * numbers them from SQLite exactly as they were appended, across row boundaries. Likewise the
 * prefill timelines: grouped changes are one row, restored with the single ones, purged by age.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { HybridClock } from "../../durable-objects/core/replica/clock";
import type { DepartureLog } from "../../durable-objects/core/replica/departure-log";
import type { TimelineEvent } from "../../durable-objects/core/replica/events";
import { SqlTimeline, TIMELINE_SCHEMA } from "../../durable-objects/replication/sql-timeline";
import { SqlReplicaStore } from "../../durable-objects/replication/sql-replica-store";
import { ROW_BYTES } from "../../durable-objects/storage/row-groups";
import { trackerStub, uniqueKey } from "./helpers";

const T0 = 1_700_000_000_000;
/** Entry `seq`'s bytes: distinct lengths, so a wrong split cannot go unnoticed. */
const entryOf = (seq: number) => Uint8Array.from({ length: seq * 3 }, (_, i) => (seq * 31 + i) & 0xff);
const seqs = (entries: { seq: number; entry: Uint8Array }[]) => entries.map((e) => e.seq);

describe("outbox rows", () => {
  it("stores a grouped call's events as one row and serves them from SQLite like single ones", async () => {
    await runInDurableObject(trackerStub(uniqueKey("outbox")), (_instance, state) => {
      const { sql } = state.storage;
      const written = new SqlReplicaStore(sql, "outbox-test").outbox;
      written.append(1, entryOf(1), T0);
      written.group(() => {
        for (let seq = 2; seq <= 6; seq++) written.append(seq, entryOf(seq), T0 + 10);
      });
      written.group(() => {});
      written.append(7, entryOf(7), T0 + 20);
      expect(sql.exec("SELECT seq, count FROM outbox ORDER BY seq").toArray()).toEqual([
        { seq: 1, count: 1 },
        { seq: 2, count: 5 },
        { seq: 7, count: 1 },
      ]);

      // A fresh store has nothing in memory: everything below comes from SQLite.
      const read = new SqlReplicaStore(sql, "outbox-test").outbox;
      expect(read.lastSeq()).toBe(7);
      const all = read.read(0, 100);
      expect(seqs(all)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      for (const { seq, entry } of all) expect([...entry]).toEqual([...entryOf(seq)]);
      expect(seqs(read.read(3, 2))).toEqual([4, 5]);
      expect(seqs(read.read(5, 10))).toEqual([6, 7]);
      expect([read.appendedAt(1), read.appendedAt(4), read.appendedAt(7), read.appendedAt(8)]).toEqual([
        T0,
        T0 + 10,
        T0 + 20,
        undefined,
      ]);

      // Trimming drops whole rows only: a row partly acknowledged stays readable past the cut.
      read.trim(4);
      expect(read.oldest()).toBe(2);
      expect(seqs(read.read(4, 10))).toEqual([5, 6, 7]);
      // The newest row is never trimmed: it holds the replica's last sequence number.
      read.trim(7);
      expect(sql.exec("SELECT seq FROM outbox").toArray()).toEqual([{ seq: 7 }]);
      expect(new SqlReplicaStore(sql, "outbox-test").outbox.lastSeq()).toBe(7);

      // The newest row may be a group: the last number is its last event's.
      read.group(() => {
        for (let seq = 8; seq <= 9; seq++) read.append(seq, entryOf(seq), T0 + 30);
      });
      expect(new SqlReplicaStore(sql, "outbox-test").outbox.lastSeq()).toBe(9);
    });
  });

  it("splits a group past ROW_BYTES into rows below the 2 MB row limit, read back in order", async () => {
    await runInDurableObject(trackerStub(uniqueKey("outbox")), (_instance, state) => {
      const { sql } = state.storage;
      const outbox = new SqlReplicaStore(sql, "outbox-test").outbox;
      // 4,096 events of 700 bytes (a /batch of 4,096 adds of 64 hashes): 2.8 MB in all.
      const big = (seq: number) => Uint8Array.from({ length: 700 }, (_, i) => (seq + i) & 0xff);
      outbox.group(() => {
        for (let seq = 1; seq <= 4_096; seq++) outbox.append(seq, big(seq), T0);
      });
      const rows = sql.exec<{ count: number; bytes: number }>(
        "SELECT count, length(event) AS bytes FROM outbox ORDER BY seq",
      );
      const sizes = rows.toArray();
      expect(sizes.length).toBe(3);
      expect(sizes.reduce((n, row) => n + row.count, 0)).toBe(4_096);
      for (const row of sizes) expect(row.bytes).toBeLessThanOrEqual(ROW_BYTES);
      const again = new SqlReplicaStore(sql, "outbox-test").outbox;
      const read = again.read(1_000, 3_000);
      expect(seqs(read)).toEqual(Array.from({ length: 3_000 }, (_, i) => 1_001 + i));
      for (const { seq, entry } of read) expect(entry[0]).toBe(seq & 0xff);
    });
  });

  it("keeps a grouped call's timeline changes as one row, restores them with single ones, and purges a group once all of it is old", async () => {
    await runInDurableObject(trackerStub(uniqueKey("timeline")), (_instance, state) => {
      const { sql } = state.storage;
      const timeline = new SqlTimeline(sql, () => sql.exec(TIMELINE_SCHEMA));
      const change = (ts: number, requestId: string): TimelineEvent => ({
        type: "free",
        ts,
        origin: "east",
        requestId,
      });
      timeline.set(change(100, "single"));
      timeline.group(() => {
        for (const [ts, id] of [
          [200, "a"],
          [300, "b"],
        ] as const)
          timeline.set(change(ts, id));
      });
      timeline.group(() => timeline.set(change(400, "c")));
      const restored = () => {
        const seen: string[] = [];
        const log = { restore: (e: TimelineEvent) => seen.push(`${e.requestId}@${e.ts}`) };
        timeline.restore(log as unknown as DepartureLog, { observe: () => {} } as unknown as HybridClock);
        return seen.sort();
      };
      expect(restored()).toEqual(["a@200", "b@300", "c@400", "single@100"]);
      expect(sql.exec("SELECT ts, count FROM timeline_groups ORDER BY ts").toArray()).toEqual([
        { ts: 300, count: 2 },
        { ts: 400, count: 1 },
      ]);
      // The group of 200 and 300 stays until 300 is old too.
      timeline.purge(250);
      expect(restored()).toEqual(["a@200", "b@300", "c@400"]);
      timeline.purge(301);
      expect(restored()).toEqual(["c@400"]);
    });
  });
});
