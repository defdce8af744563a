/**
 * A request's life over HTTP: POST /add books it (distinct blocks and unfinished prefill tokens per
 * rank), POST /prefill_complete ends its prefill, POST /free releases it; unknown trackers, ranks and
 * requests answer Dynamo's 404 and 409 texts and change nothing.
 */
import { describe, expect } from "vitest";
import {
  add,
  expectError,
  expectOk,
  itBooking,
  loadsOf,
  okJson,
  potentialLoads,
  register,
  requestOp,
  stateText,
  uniqueModel,
  workersOf,
} from "./api-http";
import { load } from "./api-rows";

describe("POST /add, /prefill_complete and /free", () => {
  itBooking(
    "adds with 201 and counts distinct blocks and unfinished prefill tokens per rank, idle ranks at zero",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model }, 1, { dpSize: 2 }), 201);
      await expectOk(add({ model }, "a", 1, 0, [1, 2, 3], 8), 201);
      await expectOk(add({ model }, "b", 1, 0, [1, 2, 4], 5), 201);
      expect(await loadsOf({ model })).toEqual([
        load(model, "default", 1, 0, 13, 4),
        load(model, "default", 1, 1),
      ]);
    },
  );

  itBooking(
    "answers 404 no slot tracker to add, prefill_complete, free and potential_loads on an unknown tracker",
    async () => {
      const model = uniqueModel();
      const text = `no slot tracker for model=${model} tenant=default`;
      await expectError(add({ model }, "r", 1, 0, [1], 1), 404, text);
      await expectError(requestOp("/prefill_complete", { model }, "r"), 404, text);
      await expectError(requestOp("/free", { model }, "r"), 404, text);
      await expectError(potentialLoads({ model }, [1], 1), 404, text);
      await expectError(
        potentialLoads({ model, tenant: "t" }, [1], 1),
        404,
        `no slot tracker for model=${model} tenant=t`,
      );
      expect(await workersOf({ model })).toEqual([]);
    },
  );

  itBooking(
    "answers 404 naming the worker rank when the rank is outside the worker's range or the worker is unknown",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model }, 1, { dpStart: 0, dpSize: 2 }), 201);
      await expectOk(register({ model }, 2, { dpStart: 3, dpSize: 2 }), 201);
      const before = await stateText({ model });
      await expectError(
        add({ model }, "r", 1, 5, [1], 1),
        404,
        "Worker WorkerWithDpRank { worker_id: 1, dp_rank: 5 } not found",
      );
      await expectError(
        add({ model }, "r", 1, 2, [1], 1),
        404,
        "Worker WorkerWithDpRank { worker_id: 1, dp_rank: 2 } not found",
      );
      await expectError(
        add({ model }, "r", 2, 2, [1], 1),
        404,
        "Worker WorkerWithDpRank { worker_id: 2, dp_rank: 2 } not found",
      );
      await expectError(
        add({ model }, "r", 9, 0, [1], 1),
        404,
        "Worker WorkerWithDpRank { worker_id: 9, dp_rank: 0 } not found",
      );
      expect(await stateText({ model })).toBe(before);
      await expectOk(add({ model }, "r", 2, 4, [1], 1), 201);
    },
  );

  itBooking("refuses a live request id with 409 naming the rank that holds it, on any rank", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { dpSize: 2 }), 201);
    await expectOk(register({ model }, 2), 201);
    await expectOk(add({ model }, "r", 1, 0, [1, 2], 4), 201);
    const before = await stateText({ model });
    const text =
      "Request r already exists (assigned to worker WorkerWithDpRank { worker_id: 1, dp_rank: 0 })";
    await expectError(add({ model }, "r", 1, 0, [1, 2], 4), 409, text);
    await expectError(add({ model }, "r", 1, 1, [3], 1), 409, text);
    await expectError(add({ model }, "r", 2, 0, [3], 1), 409, text);
    expect(await stateText({ model })).toBe(before);
  });

  itBooking(
    "completes prefill with 200, a repeat is 200, and an unknown request is 404 Request r not found",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model }, 1), 201);
      await expectOk(add({ model }, "a", 1, 0, [1, 2], 8), 201);
      await expectOk(add({ model }, "b", 1, 0, [1, 3], 5), 201);
      await expectOk(requestOp("/prefill_complete", { model }, "a"), 200);
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 5, 3)]);
      await expectOk(requestOp("/prefill_complete", { model }, "a"), 200);
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 5, 3)]);
      await expectError(requestOp("/prefill_complete", { model }, "r"), 404, "Request r not found");
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 5, 3)]);
    },
  );

  itBooking(
    "frees with 200, releasing blocks and tokens; an unknown id on an existing tracker is 200 and a no-op",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model }, 1), 201);
      await expectOk(add({ model }, "a", 1, 0, [1, 2], 8), 201);
      await expectOk(add({ model }, "b", 1, 0, [1, 3], 5), 201);
      await expectOk(requestOp("/free", { model }, "a"), 200);
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 5, 2)]);
      await expectOk(requestOp("/free", { model }, "a"), 200);
      await expectOk(requestOp("/free", { model }, "nope"), 200);
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 5, 2)]);
      await expectOk(requestOp("/free", { model }, "b"), 200);
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 0, 0)]);
    },
  );

  itBooking("forgets a free that comes before its add: the later add counts", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1), 201);
    await expectOk(requestOp("/free", { model }, "early"), 200);
    await expectOk(add({ model }, "early", 1, 0, [1], 6), 201);
    expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 6, 1)]);
  });

  itBooking("defaults new_isl_tokens to 0 and accepts an empty prompt", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1), 201);
    await expectOk(add({ model }, "a", 1, 0, [1, 2]), 201);
    await expectOk(add({ model }, "b", 1, 0, [], 3), 201);
    expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 3, 2)]);
    expect(await okJson(potentialLoads({ model }, []))).toEqual([
      {
        worker_id: 1,
        dp_rank: 0,
        potential_prefill_tokens: 3,
        potential_decode_blocks: 2,
        active_requests: 2,
      },
    ]);
  });
});
