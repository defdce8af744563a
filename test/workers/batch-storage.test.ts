/**
 * What `/batch` stores: one journal row, which a reset replays into the same rows as the same ops
 * sent one by one over the single-op calls, byte for byte where they are bytes, with unusual values
 * in every column; and a tracker written by batches comes back from a reset exactly as it was.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { BatchOp } from "../../durable-objects/types";
import { hashes, storedRequests, trackerStub, uniqueKey } from "./helpers";

const BIG = 2n ** 64n - 2n;
const LONG_ID = `long-${"é".repeat(250)}`;

/**
 * Every kind of write, in runs and alone: ids with NUL, quotes, backslashes, astral characters and
 * 500+ UTF-8 bytes; worker ids past 2^53; empty prompts; whole and fractional durations; a freed id
 * booked again; prefill completions that move a decaying anchor.
 */
const OPS: BatchOp[] = [
  { op: "add", requestId: "a\u0000b", workerId: BIG, dpRank: 0, hashes: hashes(1, 2, -1), newIslTokens: 30 },
  { op: "add", requestId: 'q"uote\\', workerId: BIG, dpRank: 0, hashes: hashes(), newIslTokens: 5 },
  {
    op: "add",
    requestId: "𝄞-clef",
    workerId: 7n,
    dpRank: 0,
    hashes: hashes(1, 2, 3),
    newIslTokens: 2 ** 40,
    expectedOutputTokens: 99,
    expectedPrefillDurationMs: 40,
  },
  {
    op: "add",
    requestId: LONG_ID,
    workerId: 7n,
    dpRank: 0,
    hashes: hashes(1, 9),
    newIslTokens: 12,
    expectedPrefillDurationMs: 12.345,
  },
  {
    op: "add",
    requestId: "d",
    workerId: 7n,
    dpRank: 0,
    hashes: hashes(4),
    newIslTokens: 8,
    expectedPrefillDurationMs: 0,
  },
  { op: "prefill_complete", requestId: "𝄞-clef" },
  { op: "prefill_complete", requestId: LONG_ID },
  { op: "prefill_complete", requestId: "a\u0000b" },
  { op: "free", requestId: 'q"uote\\' },
  { op: "free", requestId: "d" },
  { op: "free", requestId: "never-added" },
  { op: "add", requestId: 'q"uote\\', workerId: 7n, dpRank: 0, hashes: hashes(5, 6), newIslTokens: 1 },
  { op: "add", requestId: "e", workerId: BIG, dpRank: 1, hashes: hashes(2n ** 63n, 3), newIslTokens: 4 },
];

function journalRows(key: ReturnType<typeof uniqueKey>): Promise<number> {
  return runInDurableObject(
    trackerStub(key),
    (_instance, state) => state.storage.sql.exec("SELECT count(*) AS n FROM journal").one().n as number,
  );
}

async function registered() {
  const key = uniqueKey("batch-rows");
  const stub = trackerStub(key);
  expect((await stub.register({ workerId: BIG, blockSize: 16, dpStart: 0, dpSize: 2 })).ok).toBe(true);
  expect((await stub.register({ workerId: 7n, blockSize: 16, dpStart: 0, dpSize: 1 })).ok).toBe(true);
  return { key, stub };
}

describe("/batch storage", () => {
  it("writes the same rows as the single-op calls, and comes back from a reset unchanged", async () => {
    const single = await registered();
    for (const op of OPS) {
      if (op.op === "add") await single.stub.add(op);
      else if (op.op === "prefill_complete") await single.stub.prefillComplete(op.requestId);
      else await single.stub.free(op.requestId);
    }
    const batched = await registered();
    const answer = await batched.stub.batch(OPS);
    expect(answer.ok && answer.results.every((r) => r.status < 300)).toBe(true);

    // The batch is one journal row; a restart replays it into `requests` before reading them back.
    expect(await journalRows(batched.key)).toBe(1);
    const query = hashes(1, 2, 3, 4);
    const loads = await batched.stub.listLoads();
    const potential = await batched.stub.potentialLoads(query, 10);
    expect(loads).toEqual(await single.stub.listLoads());
    await abortAllDurableObjects();
    const again = trackerStub(batched.key);
    expect(await again.listLoads()).toEqual(loads);
    expect(await again.potentialLoads(query, 10)).toEqual(potential);
    expect(await journalRows(batched.key)).toBe(0);

    const rows = await storedRequests(batched.key);
    expect(rows).toEqual(await storedRequests(single.key));
    expect(rows.map((row) => row.request_id)).toEqual(["a\u0000b", "𝄞-clef", LONG_ID, 'q"uote\\', "e"]);
    expect(rows.find((row) => row.request_id === LONG_ID)?.prefill_duration_ms).toBe(12.345);
    // The restored ids are live ones: booking any of them again is refused.
    for (const requestId of rows.map((row) => row.request_id as string)) {
      const duplicate = await again.add({
        requestId,
        workerId: 7n,
        dpRank: 0,
        hashes: hashes(),
        newIslTokens: 0,
      });
      expect(duplicate.ok).toBe(false);
    }
  });
});
