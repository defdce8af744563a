import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { add, expectOk, loadsOf, uniqueModel } from "./api-http";
import { catalogText, complete, patchWorker, postWorker, recordOf } from "./selection-http";

/** The catalog is durable: records, the ranks they gave the slot tracker and the directory's map. */
describe("catalog durability", () => {
  it("brings back every record, the bookings on a catalog worker's kept ranks and the id's partition after a reset", async () => {
    const model = uniqueModel("durable");
    const id = 2n ** 64n - 3n;
    await postWorker(complete(model, id, { data_parallel_size: 3, taints: ["b", "a"] }));
    await postWorker({ worker_id: 5, model_name: model, block_size: 16 });
    await expectOk(add({ model }, "kept", id, 1, [1, 2], 10), 201);
    await expectOk(add({ model }, "gone", id, 2, [3], 10), 201);
    await patchWorker(id, { data_parallel_size: 2 });
    const catalog = await catalogText(model);
    const loads = await loadsOf({ model });

    await abortAllDurableObjects();

    expect(await catalogText(model)).toBe(catalog);
    expect(await loadsOf({ model })).toEqual(loads);
    // Worker 5, incomplete but of the partition's block size, is a slot-tracker worker too.
    expect(loads).toMatchObject([
      { worker_id: 5, dp_rank: 0, active_prefill_tokens: 0 },
      { worker_id: id, dp_rank: 0, active_prefill_tokens: 0 },
      { worker_id: id, dp_rank: 1, active_prefill_tokens: 10, active_decode_blocks: 2 },
    ]);
    // The directory still finds the worker by id alone.
    const patched = await recordOf(patchWorker(id, { endpoint: "http://after-reset" }));
    expect(patched).toMatchObject({ status: 200, record: { endpoint: "http://after-reset" } });
  });
});
