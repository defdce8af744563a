/**
 * Leases and owned bookings in a real object's SQLite (`storage/lease-rows.ts`, the owner columns
 * of `requests`): what they write, that they come back after a reset with the same deadlines, that
 * the last worker leaving keeps them, and that a database from before leases still opens.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Tracker } from "../../durable-objects/core/tracker";
import { SqlTrackerStore } from "../../durable-objects/storage/sql-tracker-store";
import { TRACKER_SCHEMA } from "../../durable-objects/storage/tracker-schema";
import { u64ToBlob } from "../../durable-objects/storage/u64";
import type { AddInput } from "../../durable-objects/types";
import { hashes, trackerStub, uniqueKey } from "./helpers";

type Key = ReturnType<typeof uniqueKey>;
interface Inside {
  tracker: Tracker;
  store: SqlTrackerStore;
}

/** Runs `fn` on the object's tracker and store, as its RPC methods would (the routes are not needed). */
function inside<T>(key: Key, fn: (o: Inside, sql: SqlStorage) => T): Promise<T> {
  return runInDurableObject(trackerStub(key), (instance, state) =>
    fn(instance as unknown as Inside, state.storage.sql),
  );
}

const owned = (requestId: string, owner: string, dpRank = 0): AddInput => ({
  requestId,
  workerId: 1n,
  dpRank,
  hashes: hashes(1, 2, dpRank),
  newIslTokens: 8,
  owner,
});

const rowsOf = (sql: SqlStorage, query: string) => sql.exec(query).toArray();

async function withWorker(prefix: string): Promise<Key> {
  const key = uniqueKey(prefix);
  expect((await trackerStub(key).register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 2 })).ok).toBe(
    true,
  );
  return key;
}

describe("lease storage", () => {
  it("brings leases and owned bookings back after a reset, with the same deadlines and grants", async () => {
    const key = await withWorker("lease-reset");
    const now = Date.now();
    const before = await inside(key, ({ tracker }) => {
      tracker.renewLease("fe-1", 60_000, now);
      // A shorter renewal keeps two grants; a second owner with a unicode name.
      tracker.renewLease("fe-1", 30_000, now + 1);
      tracker.renewLease("fé-2 🚀", 45_000, now + 2);
      expect(tracker.add(owned("o1", "fe-1"), now + 2)).toEqual({ ok: true });
      expect(tracker.add(owned("o2", "fé-2 🚀", 1), now + 2)).toEqual({ ok: true });
      return {
        leases: tracker.listLeases(now + 3),
        steps: tracker.leases.get("fe-1")!.steps.map((s) => ({ ...s })),
        grant: [tracker.request("o1")!.grantAt, tracker.request("o1")!.grantDeadline],
        deadline: tracker.request("o1")!.deadline,
      };
    });
    expect(before.steps).toEqual([
      { at: now, deadline: now + 60_000 },
      { at: now + 1, deadline: now + 30_001 },
    ]);
    const stored = await inside(key, (_o, sql) => ({
      leases: rowsOf(
        sql,
        "SELECT owner, length(steps) AS steps, length(cuts) AS cuts FROM leases ORDER BY owner",
      ),
      requests: rowsOf(sql, "SELECT request_id, owner, grant_at, grant_deadline FROM requests ORDER BY seq"),
    }));
    expect(stored).toEqual({
      leases: [
        { owner: "fe-1", steps: 32, cuts: 0 },
        { owner: "fé-2 🚀", steps: 16, cuts: 0 },
      ],
      requests: [
        { request_id: "o1", owner: "fe-1", grant_at: now + 1, grant_deadline: now + 30_001 },
        { request_id: "o2", owner: "fé-2 🚀", grant_at: now + 2, grant_deadline: now + 45_002 },
      ],
    });

    await abortAllDurableObjects();
    const after = await inside(key, ({ tracker }) => ({
      leases: tracker.listLeases(now + 3),
      steps: tracker.leases.get("fe-1")!.steps.map((s) => ({ ...s })),
      grant: [tracker.request("o1")!.grantAt, tracker.request("o1")!.grantDeadline],
      deadline: tracker.request("o1")!.deadline,
      owners: [...tracker.leases.bookingsByOwner()],
    }));
    expect(after).toEqual({
      ...before,
      owners: [
        ["fe-1", 1],
        ["fé-2 🚀", 1],
      ],
    });
    expect(after.leases).toEqual([
      { owner: "fe-1", expiresAtMs: now + 60_000, bookings: 1 },
      { owner: "fé-2 🚀", expiresAtMs: now + 45_002, bookings: 1 },
    ]);
    // Restored leases still lapse and free at their deadline.
    await inside(key, ({ tracker }) => {
      expect(tracker.listLeases(now + 45_002).map((l) => l.owner)).toEqual(["fe-1"]);
      expect(tracker.request("o2")).toBeUndefined();
      expect(tracker.request("o1")?.owner).toBe("fe-1");
    });
  });

  it("writes a renewal as one update of the steps, a batch of renewals of one lease once, and nothing for one that changes nothing", async () => {
    const key = await withWorker("lease-cost");
    const now = Date.now();
    const cost = await inside(key, ({ tracker, store }, sql) => {
      const written = (fn: () => void) => {
        const at = store.rowsWritten;
        fn();
        return store.rowsWritten - at;
      };
      const create = written(() => tracker.renewLease("fe-1", 30_000, now));
      const renew = written(() => tracker.renewLease("fe-1", 30_000, now + 10_000));
      // A renewal to a deadline the lease already has (the same moment again) changes nothing.
      const same = written(() => tracker.renewLease("fe-1", 30_000, now + 10_000));
      const grouped = written(() =>
        store.group(() => {
          for (let i = 1; i <= 50; i++) tracker.renewLease("fe-1", 30_000, now + 10_000 + i);
        }),
      );
      const row = rowsOf(sql, "SELECT steps, cuts FROM leases")[0]!;
      const steps = new DataView(row.steps as ArrayBuffer);
      return {
        create,
        renew,
        same,
        grouped,
        stored: [steps.getFloat64(0, true), steps.getFloat64(8, true), (row.cuts as ArrayBuffer).byteLength],
        deadline: tracker.leases.get("fe-1")!.deadline,
      };
    });
    expect(cost).toMatchObject({ create: 1, renew: 1, same: 0, grouped: 1 });
    expect(cost.stored).toEqual([cost.deadline! - 30_000, cost.deadline, 0]);
  });

  it("writes a lapse as one update, drops a lease with nothing left, and keeps unowned rows as they were", async () => {
    const key = await withWorker("lease-lapse");
    const now = Date.now();
    await inside(key, ({ tracker, store }, sql) => {
      tracker.renewLease("fe-1", 5_000, now);
      tracker.add(owned("o1", "fe-1"), now);
      tracker.add({ ...owned("plain", "x", 1), owner: undefined }, now);
      const at = store.rowsWritten;
      // The lapse: one lease row (steps emptied, the cut recorded) and the booking's removal.
      tracker.expire(now + 5_000);
      expect(store.rowsWritten - at).toBe(2);
      expect(tracker.request("o1")).toBeUndefined();
      const row = rowsOf(sql, "SELECT length(steps) AS steps, cuts FROM leases")[0]!;
      expect([row.steps, new DataView(row.cuts as ArrayBuffer).getFloat64(0, true)]).toEqual([
        0,
        now + 5_000,
      ]);
      expect(rowsOf(sql, "SELECT owner, grant_at, grant_deadline FROM requests")).toEqual([
        { owner: null, grant_at: null, grant_deadline: null },
      ]);
      // Once its cut is forgotten the lease has nothing to remember: its row goes.
      tracker.leases.purge(now + 10_000);
      expect(rowsOf(sql, "SELECT * FROM leases")).toEqual([]);
    });
  });

  it("journals an owned booking with its owner and an unowned one as long as before leases", async () => {
    const key = await withWorker("lease-journal");
    const now = Date.now();
    await inside(key, ({ tracker, store }, sql) => {
      tracker.renewLease("fe-1", 60_000, now);
      store.group(() => {
        tracker.add(owned("o1", "fe-1"), now);
        tracker.add({ ...owned("plain", "x", 1), owner: undefined }, now);
      });
      const entries = JSON.parse(
        rowsOf(sql, "SELECT entries FROM journal")[0]!.entries as string,
      ) as unknown[][];
      // A put and the 18 columns of before leases; an owned one with its owner and grant after them.
      expect(entries.map((e) => e.length)).toEqual([22, 19]);
      expect(entries[0]!.slice(19)).toEqual(["fe-1", now, now + 60_000]);
    });
    await abortAllDurableObjects();
    await inside(key, ({ tracker }, sql) => {
      expect([tracker.request("o1")?.owner, tracker.request("plain")?.owner]).toEqual(["fe-1", null]);
      expect(rowsOf(sql, "SELECT request_id, owner FROM requests ORDER BY seq")).toEqual([
        { request_id: "o1", owner: "fe-1" },
        { request_id: "plain", owner: null },
      ]);
    });
  });

  it("keeps lease rows when the last worker leaves the tracker", async () => {
    const key = await withWorker("lease-last");
    const now = Date.now();
    await inside(key, ({ tracker }, sql) => {
      tracker.renewLease("fe-1", 60_000, now);
      tracker.add(owned("o1", "fe-1"), now);
      // The tracker's own unregistration (its store's `trackerDeleted`), without the object's wipe.
      expect(tracker.unregister(1n, now + 1)).toEqual({ ok: true, deleted: true });
      expect(rowsOf(sql, "SELECT count(*) AS n FROM requests")[0]!.n).toBe(0);
      expect(rowsOf(sql, "SELECT owner FROM leases")).toEqual([{ owner: "fe-1" }]);
    });
    await abortAllDurableObjects();
    await inside(key, ({ tracker }) => {
      expect(tracker.listLeases(now + 2)).toEqual([
        { owner: "fe-1", expiresAtMs: now + 60_000, bookings: 0 },
      ]);
    });
  });

  it("opens a database written before leases: adds the columns and the table, and reads its rows as unowned", async () => {
    const key = uniqueKey("lease-migrate");
    const now = Date.now();
    await inside(key, (_o, sql) => {
      const old = TRACKER_SCHEMA.replace(
        /,\s*owner TEXT,\s*grant_at INTEGER,\s*grant_deadline INTEGER/,
        "",
      ).replace(/CREATE TABLE IF NOT EXISTS leases \([^)]*\) WITHOUT ROWID;/, "");
      expect(old).not.toMatch(/owner|leases/);
      sql.exec(old);
      sql.exec(
        "INSERT INTO workers (worker_id, block_size, dp_start, dp_size) VALUES (?, 16, 0, 1)",
        u64ToBlob(1n),
      );
      sql.exec(
        `INSERT INTO requests (request_id, seq, worker_id, dp_rank, hashes, new_isl_tokens, started_at, deadline)
           VALUES ('old', 1, ?, 0, ?, 4, ?, ?)`,
        u64ToBlob(1n),
        hashes(5).buffer,
        now,
        now + 60_000,
      );
      const store = new SqlTrackerStore(sql);
      const tracker = new Tracker({ model: "m", tenant: "t", store });
      store.hydrate(tracker);
      expect([tracker.request("old")?.owner, tracker.request("old")?.deadline]).toEqual([null, now + 60_000]);
      const columns = rowsOf(sql, "PRAGMA table_info(requests)").map((c) => c.name);
      expect(columns.slice(-3)).toEqual(["owner", "grant_at", "grant_deadline"]);
      // And it takes leases and owned bookings from then on.
      tracker.renewLease("fe-1", 60_000, now);
      expect(tracker.add({ ...owned("new", "fe-1"), dpRank: 0 }, now)).toEqual({ ok: true });
      expect(rowsOf(sql, "SELECT owner FROM requests WHERE request_id = 'new'")).toEqual([{ owner: "fe-1" }]);
      expect(rowsOf(sql, "SELECT owner FROM leases")).toEqual([{ owner: "fe-1" }]);
    });
  });
});
