import fc from "fast-check";
import { afterAll, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import { EXPIRY_MS, expectDrained, observe, play, scenarioArb, totals } from "./replication-scenario";

/**
 * Replicas over a hostile network converge: random operations at random replicas (drawn from small
 * alphabets so the same request id is added at two replicas, freed where its add has not arrived,
 * completed elsewhere, workers re-registered or unregistered concurrently, and catalog records
 * upserted, their DP ranges changed and removed, against registrations of the same ids), while
 * batches are dropped, duplicated, held back and delivered after newer ones, timed out while their
 * copy is still on the wire, refused as overloaded, and links are partitioned. Then the network heals and
 * the replicas settle; every replica must answer every read identically, at several common times,
 * decayed prefill figures included (where adds carry an expected prefill duration), and anchor each
 * rank's decaying front at the same moment (`observe`). fast-check prints the seed and the shrunk
 * scenario of any failure.
 */

const READ_OFFSETS = [0, 1, 200, 2_000, EXPIRY_MS / 2, EXPIRY_MS + 1];

/** What the settled catalogs held over all runs, so the test can check the catalog's paths were taken. */
const catalog = { records: 0, bookings: 0, floors: 0 };

function countCatalog(tracker: Tracker): void {
  catalog.records += tracker.catalog.size;
  for (const entry of tracker.catalog.entries.values()) if (entry.upsert.floors.length > 0) catalog.floors++;
  for (const req of tracker.book.requests.values())
    if (tracker.catalog.entries.has(req.slot.workerId)) catalog.bookings++;
}

it("replicas read identically once the network heals and every batch is delivered, whatever the interleaving", () => {
  fc.assert(
    fc.property(scenarioArb, (s) => {
      const { sim, now } = play(s, false);
      expectDrained(sim, now);
      countCatalog(sim.replicas[0]!.tracker);
      for (const offset of READ_OFFSETS) {
        const [first, ...rest] = sim.replicas.map((r) => observe(r.tracker, now + offset));
        for (const [i, seen] of rest.entries())
          expect(seen, `${sim.replicas[i + 1]!.name} at +${offset} ms`).toEqual(first);
      }
    }),
    { numRuns: 300 },
  );
});

/**
 * With every change made at one replica, its order is the single tracker's, so every replica must
 * read what one unreplicated tracker given the same calls reads, decayed prefill included, also
 * where peers were caught up by snapshot (which ships the departures anchors derive from). Exact
 * while the origin stamps fewer than 1,024 changes in one millisecond, as here: past that its hybrid
 * clock, whose key times replicas anchor at, runs ahead of the wall clock the single tracker uses.
 */
it("changes made at one replica reach every replica as a single unreplicated tracker would have them", () => {
  fc.assert(
    fc.property(scenarioArb, (s) => {
      const { sim, mirror, now } = play(s, true);
      expectDrained(sim, now);
      for (const offset of READ_OFFSETS) {
        const expected = observe(mirror, now + offset);
        for (const r of sim.replicas) {
          expect(observe(r.tracker, now + offset), `${r.name} at +${offset} ms`).toEqual(expected);
        }
      }
    }),
    { numRuns: 200 },
  );
});

afterAll(() => {
  // The network model must actually reach the paths it claims to cover.
  expect(totals.snapshotPages).toBeGreaterThan(0);
  expect(totals.duplicated).toBeGreaterThan(0);
  expect(totals.stale).toBeGreaterThan(0);
  expect(totals.timeouts).toBeGreaterThan(0);
  expect(totals.dropped).toBeGreaterThan(0);
  // Catalog records, bookings of catalog workers, and floors kept across a range change or a late change.
  expect(catalog.records).toBeGreaterThan(0);
  expect(catalog.bookings).toBeGreaterThan(0);
  expect(catalog.floors).toBeGreaterThan(0);
});
