/**
 * POST /potential_loads: Dynamo's worked example, every rank listed in worker-id order, and the signed
 * and unsigned spellings of one 64-bit hash counted as the same block.
 */
import { describe, expect } from "vitest";
import {
  add,
  expectOk,
  itBooking,
  loadsOf,
  okJson,
  post,
  potentialLoads,
  register,
  requestOp,
  uniqueModel,
} from "./api-http";
import { load, U64_MAX } from "./api-rows";

describe("POST /potential_loads", () => {
  itBooking(
    "gives Dynamo's worked example: active [1,2,3]+8, query [1,2,4]+5 → 13 tokens, 4 blocks, 1 request",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model }, 1, { blockSize: 16, dpStart: 0, dpSize: 1 }), 201);
      await expectOk(add({ model }, "req-1", 1, 0, [1, 2, 3], 8), 201);
      expect(await okJson(potentialLoads({ model }, [1, 2, 4], 5))).toEqual([
        {
          worker_id: 1,
          dp_rank: 0,
          potential_prefill_tokens: 13,
          potential_decode_blocks: 4,
          active_requests: 1,
        },
      ]);
    },
  );

  itBooking("lists every rank, idle ones too, sorted by worker id as a number and then rank", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 10, { dpStart: 0, dpSize: 2 }), 201);
    await expectOk(register({ model }, U64_MAX, { dpStart: 7, dpSize: 1 }), 201);
    await expectOk(register({ model }, 9, { dpStart: 3, dpSize: 2 }), 201);
    await expectOk(add({ model }, "a", 9, 4, [1, 2, 4, 5], 6), 201);
    await expectOk(add({ model }, "b", 9, 4, [7], 1), 201);
    await expectOk(add({ model }, "c", 10, 1, [1, 2, 3], 2), 201);
    await expectOk(requestOp("/prefill_complete", { model }, "c"), 200);
    // Overlap is by prefix: on rank (9, 4) the query shares [1, 2] with [1, 2, 4, 5]; 5 is not credited.
    expect(await okJson(potentialLoads({ model }, [1, 2, 3, 5], 10))).toEqual([
      {
        worker_id: 9,
        dp_rank: 3,
        potential_prefill_tokens: 10,
        potential_decode_blocks: 4,
        active_requests: 0,
      },
      {
        worker_id: 9,
        dp_rank: 4,
        potential_prefill_tokens: 17,
        potential_decode_blocks: 5 + 2,
        active_requests: 2,
      },
      {
        worker_id: 10,
        dp_rank: 0,
        potential_prefill_tokens: 10,
        potential_decode_blocks: 4,
        active_requests: 0,
      },
      {
        worker_id: 10,
        dp_rank: 1,
        potential_prefill_tokens: 10,
        potential_decode_blocks: 3 + 1,
        active_requests: 1,
      },
      {
        worker_id: U64_MAX,
        dp_rank: 7,
        potential_prefill_tokens: 10,
        potential_decode_blocks: 4,
        active_requests: 0,
      },
    ]);
  });

  itBooking("treats hash -1 in /add and 18446744073709551615 in the query as the same block", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { dpSize: 2 }), 201);
    await expectOk(
      post(
        "/add",
        `{"model_name":"${model}","request_id":"r","worker_id":1,"dp_rank":0,"sequence_hashes":[-1],"new_isl_tokens":4}`,
      ),
      201,
    );
    const res = await post(
      "/potential_loads",
      `{"model_name":"${model}","sequence_hashes":[18446744073709551615],"new_isl_tokens":0}`,
    );
    expect(await okJson(res)).toEqual([
      {
        worker_id: 1,
        dp_rank: 0,
        potential_prefill_tokens: 4,
        potential_decode_blocks: 1,
        active_requests: 1,
      },
      {
        worker_id: 1,
        dp_rank: 1,
        potential_prefill_tokens: 0,
        potential_decode_blocks: 1,
        active_requests: 0,
      },
    ]);
    // And as one block of a rank's load: two prompts holding -1 and 2^64 − 1 hold one block.
    await expectOk(
      post(
        "/add",
        `{"model_name":"${model}","request_id":"s","worker_id":1,"dp_rank":0,"sequence_hashes":[18446744073709551615]}`,
      ),
      201,
    );
    expect(await loadsOf({ model })).toEqual([
      load(model, "default", 1, 0, 4, 1),
      load(model, "default", 1, 1),
    ]);
    // i64::MIN and 2^63 are the same bits as well.
    await expectOk(add({ model }, "t", 1, 1, [-9223372036854775808n, 5], 0), 201);
    expect(await okJson(potentialLoads({ model }, [9223372036854775808n, 5]))).toEqual([
      {
        worker_id: 1,
        dp_rank: 0,
        potential_prefill_tokens: 4,
        potential_decode_blocks: 3,
        active_requests: 2,
      },
      {
        worker_id: 1,
        dp_rank: 1,
        potential_prefill_tokens: 0,
        potential_decode_blocks: 2,
        active_requests: 1,
      },
    ]);
  });
});
