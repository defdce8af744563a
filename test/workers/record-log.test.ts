/**
 * The replication records' log (`replication/sql-records.ts`), driven directly in a real object's
 * SQLite: random sets and clears of tombstones, marks and unregistrations, alone or grouped, purges by
 * age and restarts. After every step, what a restore reads back, once purged at the newest horizon
 * (as the tracker's first purge does), must equal the records kept in memory purged alike.
 */
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EventKey, HybridClock } from "../../durable-objects/core/replica/clock";
import { ReplicaRecords } from "../../durable-objects/core/replica/replica-records";
import { NULL_STORE } from "../../durable-objects/core/store";
import { RECORDS_SCHEMA, SqlRecords } from "../../durable-objects/replication/sql-records";
import { trackerStub, uniqueKey } from "./helpers";

type Kind = "free" | "prefill" | "gone";
type Change = { kind: Kind; id: string; set: boolean; ms: number };
type Step = { group: Change[] } | { single: Change } | { purge: number } | { restart: true };

const change: fc.Arbitrary<Change> = fc.record({
  kind: fc.constantFrom<Kind>("free", "prefill", "gone"),
  id: fc.constantFrom("1", "2", "3"),
  set: fc.boolean(),
  ms: fc.nat(1000),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ group: fc.array(change, { minLength: 1, maxLength: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ single: change }) },
  { weight: 2, arbitrary: fc.record({ purge: fc.nat(300) }) },
  { weight: 1, arbitrary: fc.constant({ restart: true as const }) },
);

const noClock = { observe: () => {} } as unknown as HybridClock;

/** The records as comparable entries, less those older than `horizon` (physical ms) but unregistrations. */
function snapshot(records: ReplicaRecords, horizon: number): string[] {
  const keep = (key: EventKey) => Math.floor(key.ts / 1024) >= horizon;
  return [
    ...[...records.freed].filter(([, k]) => keep(k)).map(([id, k]) => `free ${id} ${k.ts} ${k.origin}`),
    ...[...records.marks].filter(([, k]) => keep(k)).map(([id, k]) => `prefill ${id} ${k.ts} ${k.origin}`),
    ...[...records.gone].map(([id, k]) => `gone ${id} ${k.ts} ${k.origin}`),
  ].sort();
}

describe("replication record log", () => {
  it("restores what was kept in memory, through grouped and single changes, purges by age and restarts", async () => {
    await runInDurableObject(trackerStub(uniqueKey("record-log")), (_instance, state) => {
      const { sql } = state.storage;
      sql.exec(RECORDS_SCHEMA);
      fc.assert(
        fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
          sql.exec("DELETE FROM records");
          sql.exec("DELETE FROM record_log");
          const open = () =>
            new SqlRecords(
              sql,
              () => {},
              () => true,
            );
          let log = open();
          /** The records in memory, as the tracker keeps them. */
          const memory = new ReplicaRecords(NULL_STORE);
          let horizon = 0;
          let stamp = 0;
          const apply = (c: Change) => {
            const map = c.kind === "free" ? memory.freed : c.kind === "prefill" ? memory.marks : memory.gone;
            const id = c.kind === "gone" ? BigInt(c.id) : c.id;
            const current = (map as Map<string | bigint, EventKey>).get(id);
            if (!c.set) {
              if (!current) return;
              (map as Map<string | bigint, EventKey>).delete(id);
              log.cleared(c.kind, c.id, current);
              return;
            }
            // A record's key only moves forward between clears; times repeat, counters tell apart.
            const ms = current ? Math.max(c.ms, Math.floor(current.ts / 1024)) : c.ms;
            const key = { ts: ms * 1024 + (++stamp % 1024), origin: "east" };
            if (current && key.ts <= current.ts) return;
            (map as Map<string | bigint, EventKey>).set(id, key);
            log.set(c.kind, c.id, key);
          };
          for (const s of steps) {
            if ("group" in s) log.group(() => s.group.forEach(apply));
            else if ("single" in s) apply(s.single);
            else if ("purge" in s) {
              horizon = Math.max(horizon, s.purge);
              log.purge(horizon);
              for (const map of [memory.freed, memory.marks]) {
                for (const [id, key] of map) if (Math.floor(key.ts / 1024) < horizon) map.delete(id);
              }
            } else log = open();
            const restored = new ReplicaRecords(NULL_STORE);
            open().restore(restored, noClock);
            expect(snapshot(restored, horizon)).toEqual(snapshot(memory, horizon));
          }
        }),
        { numRuns: 1000 },
      );
    });
  });
});
