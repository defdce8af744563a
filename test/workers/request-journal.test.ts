/**
 * The request journal (`request-journal.ts`) in a real object: what a grouped call writes, which
 * later changes follow it into the journal, when it folds into `requests`; and a property test that
 * runs random batches, single calls, folds, restarts and unregistrations against two trackers — the
 * subject through `/batch` where the run says so, a twin always op by op (it never journals) — and
 * requires both to answer alike at every step and to hold the same rows at the end.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FOLD_ROWS } from "../../durable-objects/request-journal";
import type { AddInput, BatchOp } from "../../durable-objects/types";
import { hashes, storedRequests, trackerStub, uniqueKey } from "./helpers";

type Key = ReturnType<typeof uniqueKey>;

function countOf(key: Key, table: "journal" | "requests"): Promise<number> {
  return runInDurableObject(
    trackerStub(key),
    (_instance, state) => state.storage.sql.exec(`SELECT count(*) AS n FROM ${table}`).one().n as number,
  );
}

/** Folds the journal, keeping up to `keepBytes` of its newest live requests in it. */
function fold(key: Key, keepBytes = 0): Promise<void> {
  return runInDurableObject(trackerStub(key), (instance) => {
    (instance as unknown as { store: { fold(keepBytes: number): void } }).store.fold(keepBytes);
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
  it("writes a batch as one journal row, journals later changes to its requests, and compacts after FOLD_ROWS rows", async () => {
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

    // Batches booking one request and freeing the one before: the FOLD_ROWS-th folds the journal.
    // The one request live and only in the journal at that moment is written again to the journal,
    // as a snapshot row; the rows before are deleted. An explicit fold writes it to `requests`.
    for (let i = 0; i < FOLD_ROWS; i++) {
      const ops: BatchOp[] = [add(`k${i}`, [100 + i])];
      if (i > 0) ops.push({ op: "free", requestId: `k${i - 1}` });
      await trackerStub(key).batch(ops);
    }
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([1, 2]);
    await fold(key);
    expect([await countOf(key, "journal"), await countOf(key, "requests")]).toEqual([0, 3]);
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
      // Keeping nothing, a few of the newest live requests (~300 bytes each), or all of them.
      { weight: 1, arbitrary: fc.record({ fold: fc.constantFrom(0, 700, 2 ** 30) }) },
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
          } else if ("fold" in s) await fold(subject.key, s.fold);
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
