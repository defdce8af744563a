/**
 * 64-bit worker ids over JSON: 2^64 − 1 and 2^53 + 1 stay exact from /register through every listing,
 * error text and /unregister.
 */
import { describe, expect } from "vitest";
import { expectError, expectOk, get, itBooking, post, potentialLoads, uniqueModel } from "./api-http";

describe("64-bit worker ids over JSON", () => {
  itBooking(
    "keeps 18446744073709551615 and 2^53+1 exact through /register, /workers, /loads and /potential_loads",
    async () => {
      const model = uniqueModel();
      const q = `model_name=${model}&tenant_id=default`;
      await expectOk(
        post(
          "/register",
          `{"worker_id":18446744073709551615,"model_name":"${model}","block_size":16,"dp_start":0,"dp_size":1}`,
        ),
        201,
      );
      await expectOk(
        post(
          "/register",
          `{"worker_id":9007199254740993,"model_name":"${model}","block_size":16,"dp_start":2,"dp_size":1}`,
        ),
        201,
      );
      // 2^53 is its own worker: had 2^53+1 been rounded on the way in, this would be a duplicate.
      await expectOk(
        post(
          "/register",
          `{"worker_id":9007199254740992,"model_name":"${model}","block_size":16,"dp_start":4,"dp_size":1}`,
        ),
        201,
      );
      await expectOk(
        post(
          "/add",
          `{"model_name":"${model}","request_id":"a","worker_id":9007199254740993,"dp_rank":2,"sequence_hashes":[1,2],"new_isl_tokens":3}`,
        ),
        201,
      );
      await expectOk(
        post(
          "/add",
          `{"model_name":"${model}","request_id":"b","worker_id":18446744073709551615,"dp_rank":0,"sequence_hashes":[9],"new_isl_tokens":1}`,
        ),
        201,
      );

      const workers = await get("/workers", Object.fromEntries(new URLSearchParams(q)));
      expect(await workers.text()).toBe(
        `[{"worker_id":9007199254740992,"model_name":"${model}","tenant_id":"default","block_size":16,"dp_start":4,"dp_size":1},` +
          `{"worker_id":9007199254740993,"model_name":"${model}","tenant_id":"default","block_size":16,"dp_start":2,"dp_size":1},` +
          `{"worker_id":18446744073709551615,"model_name":"${model}","tenant_id":"default","block_size":16,"dp_start":0,"dp_size":1}]`,
      );
      const loads = await get("/loads", Object.fromEntries(new URLSearchParams(q)));
      expect(await loads.text()).toBe(
        `[{"model_name":"${model}","tenant_id":"default","worker_id":9007199254740992,"dp_rank":4,"active_prefill_tokens":0,"active_decode_blocks":0},` +
          `{"model_name":"${model}","tenant_id":"default","worker_id":9007199254740993,"dp_rank":2,"active_prefill_tokens":3,"active_decode_blocks":2},` +
          `{"model_name":"${model}","tenant_id":"default","worker_id":18446744073709551615,"dp_rank":0,"active_prefill_tokens":1,"active_decode_blocks":1}]`,
      );
      const potential = await potentialLoads({ model }, [1], 2);
      expect(await potential.text()).toBe(
        `[{"worker_id":9007199254740992,"dp_rank":4,"potential_prefill_tokens":2,"potential_decode_blocks":1,"active_requests":0},` +
          `{"worker_id":9007199254740993,"dp_rank":2,"potential_prefill_tokens":5,"potential_decode_blocks":2,"active_requests":1},` +
          `{"worker_id":18446744073709551615,"dp_rank":0,"potential_prefill_tokens":3,"potential_decode_blocks":2,"active_requests":1}]`,
      );
      const unfiltered = await (await get("/workers")).text();
      expect(unfiltered).toContain(`{"worker_id":9007199254740993,"model_name":"${model}",`);
      expect(unfiltered).toContain(`{"worker_id":18446744073709551615,"model_name":"${model}",`);

      await expectError(
        post(
          "/add",
          `{"model_name":"${model}","request_id":"c","worker_id":18446744073709551615,"dp_rank":7,"sequence_hashes":[]}`,
        ),
        404,
        "Worker WorkerWithDpRank { worker_id: 18446744073709551615, dp_rank: 7 } not found",
      );
      await expectError(
        post(
          "/add",
          `{"model_name":"${model}","request_id":"a","worker_id":18446744073709551615,"dp_rank":0,"sequence_hashes":[]}`,
        ),
        409,
        "Request a already exists (assigned to worker WorkerWithDpRank { worker_id: 9007199254740993, dp_rank: 2 })",
      );
      await expectOk(post("/unregister", `{"model_name":"${model}","worker_id":9007199254740993}`), 200);
      await expectError(
        post("/unregister", `{"model_name":"${model}","worker_id":9007199254740993}`),
        404,
        `worker 9007199254740993 not found for model=${model} tenant=default`,
      );
      await expectError(
        post(
          "/register",
          `{"worker_id":18446744073709551615,"model_name":"${model}","block_size":16,"dp_start":0,"dp_size":1}`,
        ),
        409,
        `worker 18446744073709551615 already registered for model=${model} tenant=default`,
      );
      expect(await (await get("/workers", { model_name: model })).text()).toBe(
        `[{"worker_id":9007199254740992,"model_name":"${model}","tenant_id":"default","block_size":16,"dp_start":4,"dp_size":1},` +
          `{"worker_id":18446744073709551615,"model_name":"${model}","tenant_id":"default","block_size":16,"dp_start":0,"dp_size":1}]`,
      );
    },
  );
});
