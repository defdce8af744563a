/**
 * The request journal (`request-journal.ts`) in a real object: what a grouped call writes, which
 * later changes follow it into the journal, how its oldest rows are cleaned (superseded changes
 * dropped, live requests carried once, then written to `requests`); and a property test that runs
 * random batches, single calls, cleanings, folds, restarts and unregistrations against two trackers — the
 * subject through `/batch` where the run says so, a twin always op by op (it never journals) — and
 * requires both to answer alike at every step and to hold the same rows at the end.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_ROWS } from "../../durable-objects/storage/request-journal";
import type { AddInput, BatchOp } from "../../durable-objects/types";
import { hashes, storedRequests, trackerStub, uniqueKey } from "./helpers";

type Key = ReturnType<typeof uniqueKey>;

function countOf(key: Key, table: "journal" | "requests"): Promise<number> {
  return runInDurableObject(
    trackerStub(key),
    (_instance, state) => state.storage.sql.exec(`SELECT count(*) AS n FROM ${table}`).one().n as number,
  );
}

interface JournalStore {
  cleanJournal(maxRows: number, maxBytes: number, keepBytes: number): void;
  foldJournal(): void;
}

type Bounds = [maxRows: number, maxBytes: number, keepBytes: number];

/**
 * Cleans the journal's oldest rows down to `maxRows` rows and `maxBytes`, carrying up to `keepBytes`
 * of live requests, or folds it all (`null`).
 */
function clean(key: Key, bounds: Bounds | null): Promise<void> {
  return runInDurableObject(trackerStub(key), (instance) => {
    const store = (instance as unknown as { store: JournalStore }).store;
    if (bounds) store.cleanJournal(...bounds);
    else store.foldJournal();
  });
}

const WORKERS = [1n, 2n ** 64n - 1n];

async function registered(prefix: string) {
  const key = uniqueKey(prefix);
  const stub = trackerStub(key);
  for (const workerId of WORKERS) {
    expect((await stub.register({ workerId, blockSize: 16, dpStart: 0, dpSize: 2 })).ok).toBe(true);
  }
  return { key, stub };
}

type Stub = ReturnType<typeof trackerStub>;

/** An op as its single call: the status its route answers. */
async function single(stub: Stub, op: BatchOp): Promise<number> {
  if (op.op === "add") return (await stub.add(op)).ok ? 201 : 4;
  const result = op.op === "free" ? await stub.free(op.requestId) : await stub.prefillComplete(op.requestId);
  return result.ok ? 200 : 4;
}

const add = (requestId: string, values: number[], workerId = WORKERS[0]!): BatchOp & AddInput => ({
  op: "add",
  requestId,
  workerId,
  dpRank: 0,
  hashes: hashes(...values),
  newIslTokens: 10,
});

describe("request journal", () => {
  it("writes a batch as one journal row, journals later changes to its requests, and cleans its oldest rows", async () => {
    const { key, stub } = await registered("journal");
    await stub.batch([add("a", [1, 2]), add("b", [1, 3]), { op: "prefill_complete", requestId: "a" }]);
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([1, 0]);

    // "a" is only in the journal: its free must follow it there, or a restart would bring it back.
    await stub.free("a");
    // "c" has no journaled change: its booking is written to `requests` directly.
    await stub.add(add("c", [4]));
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([2, 1]);
    await abortAllDurableObjects();
    expect((await trackerStub(key).listLoads()).map((load) => load.activeDecodeBlocks)).toEqual([3, 0, 0, 0]);
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([0, 2]);

    // "long" is booked, then batches each book one request and free the one before. The row past
    // MAX_ROWS has the oldest cleaned: "long" is live and only there, so it is carried to a new row.
    await trackerStub(key).batch([add("long", [7, 8])]);
    for (let i = 0; i < MAX_ROWS; i++) {
      const ops: BatchOp[] = [add(`k${i}`, [100 + i])];
      if (i > 0) ops.push({ op: "free", requestId: `k${i - 1}` });
      await trackerStub(key).batch(ops);
    }
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([MAX_ROWS + 1, 2]);
    // Cleaning every row: the frees supersede all bookings but the last; it and "long" are carried
    // while they fit in what the journal keeps, and written to `requests` when they do not.
    await clean(key, [0, 0, 2 ** 30]);
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([1, 2]);
    await clean(key, [0, 0, 0]);
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([0, 4]);
    // What went to `requests` no longer counts against what the journal keeps: "z" (~270 bytes) fits.
    await trackerStub(key).batch([add("z", [9])]);
    await clean(key, [0, 0, 400]);
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([1, 4]);
    const last = `k${MAX_ROWS - 1}`;
    await trackerStub(key).batch([
      { op: "free", requestId: "long" },
      { op: "free", requestId: "z" },
      { op: "prefill_complete", requestId: last },
    ]);
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([2, 4]);
    await clean(key, null);
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([0, 3]);
    await abortAllDurableObjects();
    expect((await trackerStub(key).listLoads()).map((load) => load.activeDecodeBlocks)).toEqual([4, 0, 0, 0]);
    expect((await storedRequests(key)).find((row) => row.request_id === last)?.prefill_done).toBe(1);
  });

  it("answers and stores as op-by-op calls do, through random batches, folds, restarts and unregistrations", async () => {
    const ids = ["r0", "r1", "r2", "r3", "r4"];
    const subOp: fc.Arbitrary<BatchOp> = fc
      .oneof(
        fc.record({
          op: fc.constant("add" as const),
          requestId: fc.constantFrom(...ids),
          workerId: fc.constantFrom(...WORKERS),
          dpRank: fc.constantFrom(0, 1, 2),
          hashes: fc
            .array(fc.integer({ min: 1, max: 6 }), { maxLength: 4 })
            .map((values) => hashes(...values)),
          newIslTokens: fc.integer({ min: 0, max: 50 }),
        }),
        fc.record({ op: fc.constant("prefill_complete" as const), requestId: fc.constantFrom(...ids) }),
        fc.record({ op: fc.constant("free" as const), requestId: fc.constantFrom(...ids) }),
        // Plain objects: fast-check's records have no prototype, which RPC refuses to serialize.
      )
      .map((op) => ({ ...op }) as BatchOp);
    const step = fc.oneof(
      { weight: 4, arbitrary: fc.record({ batch: fc.array(subOp, { minLength: 1, maxLength: 6 }) }) },
      { weight: 3, arbitrary: fc.record({ single: subOp }) },
      // Cleaning every row (carrying nothing, or everything live), all but the newest, down to ~2
      // bookings (~300 bytes each) carrying ~1, or folding all.
      {
        weight: 1,
        arbitrary: fc.record({
          clean: fc.constantFrom<Bounds | null>(
            [0, 0, 0],
            [0, 0, 2 ** 30],
            [1, 2 ** 30, 2 ** 30],
            [2 ** 30, 700, 300],
            null,
          ),
        }),
      },
      { weight: 1, arbitrary: fc.constant({ restart: true as const }) },
      { weight: 1, arbitrary: fc.record({ reregister: fc.constantFrom(...WORKERS) }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const subject = await registered("journal-subject");
        const twin = await registered("journal-twin");
        for (const s of steps) {
          if ("batch" in s) {
            const answer = await trackerStub(subject.key).batch(s.batch);
            const statuses = answer.ok ? answer.results.map((r) => (r.status < 300 ? r.status : 4)) : [];
            const expected: number[] = [];
            for (const op of s.batch) expected.push(await single(trackerStub(twin.key), op));
            expect(statuses).toEqual(expected);
          } else if ("single" in s) {
            const status = await single(trackerStub(subject.key), s.single);
            expect(status).toBe(await single(trackerStub(twin.key), s.single));
          } else if ("clean" in s) await clean(subject.key, s.clean);
          else if ("restart" in s) await abortAllDurableObjects();
          else {
            // The worker's journaled requests must leave with it (and not come back from the journal).
            for (const { key } of [subject, twin]) {
              const stub = trackerStub(key);
              expect((await stub.unregister(s.reregister)).ok).toBe(true);
              const again = { workerId: s.reregister, blockSize: 16, dpStart: 0, dpSize: 2 };
              expect((await stub.register(again)).ok).toBe(true);
            }
          }
          expect(await trackerStub(subject.key).listLoads()).toEqual(await trackerStub(twin.key).listLoads());
        }
        await abortAllDurableObjects();
        expect(await trackerStub(subject.key).listLoads()).toEqual(await trackerStub(twin.key).listLoads());
        expect(await countOf(subject.key, "journal")).toBe(0);
        expect(await storedRequests(subject.key)).toEqual(await storedRequests(twin.key));
      }),
      { numRuns: 25 },
    );
  });
});
