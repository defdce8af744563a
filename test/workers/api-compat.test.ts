import { describe, expect, it } from "vitest";
import {
  add,
  compareBytes,
  expectError,
  expectOk,
  get,
  itBooking,
  loadsOf,
  okJson,
  post,
  potentialLoads,
  register,
  requestOp,
  stateText,
  uniqueModel,
  workersOf,
} from "./api-http";

const U64_MAX = 18446744073709551615n;
const ABOVE_2_53 = 9007199254740993n;

interface WorkerRow {
  worker_id: bigint | number;
  model_name: string;
  tenant_id: string;
  block_size: number;
  dp_start: number;
  dp_size: number;
}

interface LoadRow {
  model_name: string;
  tenant_id: string;
  worker_id: bigint | number;
  dp_rank: number;
  active_prefill_tokens: number;
  active_decode_blocks: number;
}

function load(
  model: string,
  tenant: string,
  workerId: bigint | number,
  dpRank: number,
  prefill = 0,
  blocks = 0,
): LoadRow {
  return {
    model_name: model,
    tenant_id: tenant,
    worker_id: workerId,
    dp_rank: dpRank,
    active_prefill_tokens: prefill,
    active_decode_blocks: blocks,
  };
}

describe("GET /health", () => {
  it("answers 200 with an empty body, as Dynamo does", async () => {
    const res = await get("/health");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });
});

describe("POST /register and POST /unregister", () => {
  it("registers a worker with 201 {status: ok} and lists it in /workers and its ranks in /loads", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { blockSize: 16, dpStart: 0, dpSize: 2 }), 201);
    expect(await workersOf({ model })).toEqual([
      { worker_id: 1, model_name: model, tenant_id: "default", block_size: 16, dp_start: 0, dp_size: 2 },
    ]);
    expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0), load(model, "default", 1, 1)]);
  });

  it("refuses block_size 0, dp_size 0 and a dp range past u32 with 400 and Dynamo's texts, creating nothing", async () => {
    const model = uniqueModel();
    await expectError(register({ model }, 1, { blockSize: 0 }), 400, "block_size must be greater than 0");
    // The block size is checked first, as in Dynamo.
    await expectError(
      register({ model }, 1, { blockSize: 0, dpSize: 0 }),
      400,
      "block_size must be greater than 0",
    );
    await expectError(register({ model }, 1, { dpSize: 0 }), 400, "dp_size must be greater than 0");
    await expectError(
      register({ model }, 1, { dpStart: 4294967295, dpSize: 1 }),
      400,
      "dp range overflows u32: start=4294967295 size=1",
    );
    await expectError(
      register({ model }, 1, { dpStart: 2, dpSize: 4294967295 }),
      400,
      "dp range overflows u32: start=2 size=4294967295",
    );
    expect(await workersOf({ model })).toEqual([]);
    expect(await loadsOf({ model })).toEqual([]);
    // None of the refusals fixed a block size: the tracker was never created.
    await expectOk(register({ model }, 1, { blockSize: 64 }), 201);
  });

  it("accepts the highest rank below the u32 limit", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { dpStart: 4294967294, dpSize: 1 }), 201);
    expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 4294967294)]);
  });

  it("refuses a second block size with 409 block_size mismatch, naming model and tenant", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { blockSize: 16 }), 201);
    const before = await stateText({ model });
    await expectError(
      register({ model }, 2, { blockSize: 32 }),
      409,
      `block_size mismatch for model=${model} tenant=default: existing=16, requested=32`,
    );
    await expectOk(register({ model, tenant: "acme" }, 1, { blockSize: 16 }), 201);
    await expectError(
      register({ model, tenant: "acme" }, 3, { blockSize: 32 }),
      409,
      `block_size mismatch for model=${model} tenant=acme: existing=16, requested=32`,
    );
    expect(await stateText({ model })).toBe(before);
  });

  it("refuses a worker id already registered with 409, even with a different range", async () => {
    const model = uniqueModel();
    await expectOk(register({ model }, 1, { dpStart: 0, dpSize: 1 }), 201);
    const before = await stateText({ model });
    const text = `worker 1 already registered for model=${model} tenant=default`;
    await expectError(register({ model }, 1, { dpStart: 0, dpSize: 1 }), 409, text);
    await expectError(register({ model }, 1, { dpStart: 4, dpSize: 2 }), 409, text);
    expect(await stateText({ model })).toBe(before);
  });

  itBooking("keeps the same worker id in two tenants as two workers of two trackers", async () => {
    const model = uniqueModel();
    await expectOk(register({ model, tenant: "a" }, 1, { blockSize: 16 }), 201);
    await expectOk(register({ model, tenant: "b" }, 1, { blockSize: 32, dpSize: 2 }), 201);
    await expectOk(add({ model, tenant: "a" }, "r", 1, 0, [1, 2], 3), 201);
    expect(await loadsOf({ model, tenant: "a" })).toEqual([load(model, "a", 1, 0, 3, 2)]);
    expect(await loadsOf({ model, tenant: "b" })).toEqual([load(model, "b", 1, 0), load(model, "b", 1, 1)]);
    await expectOk(post("/unregister", { model_name: model, tenant_id: "b", worker_id: 1 }), 200);
    expect(await loadsOf({ model, tenant: "a" })).toEqual([load(model, "a", 1, 0, 3, 2)]);
  });

  it("unregisters with 200; an unknown worker is 404, also when the tracker does not exist", async () => {
    const model = uniqueModel();
    const notFound = `worker 9 not found for model=${model} tenant=default`;
    await expectError(post("/unregister", { model_name: model, worker_id: 9 }), 404, notFound);
    await expectOk(register({ model }, 1), 201);
    await expectOk(register({ model }, 2), 201);
    await expectError(post("/unregister", { model_name: model, worker_id: 9 }), 404, notFound);
    await expectOk(post("/unregister", { model_name: model, worker_id: 1 }), 200);
    expect(await workersOf({ model })).toEqual([
      { worker_id: 2, model_name: model, tenant_id: "default", block_size: 16, dp_start: 0, dp_size: 1 },
    ]);
    await expectError(
      post("/unregister", { model_name: model, worker_id: 1 }),
      404,
      `worker 1 not found for model=${model} tenant=default`,
    );
  });

  itBooking(
    "drops an unregistered worker's live requests: their blocks go, free is 200 and prefill_complete 404",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model }, 1), 201);
      await expectOk(register({ model }, 2), 201);
      await expectOk(add({ model }, "r1", 1, 0, [1, 2], 5), 201);
      await expectOk(add({ model }, "r2", 2, 0, [1], 7), 201);
      await expectOk(post("/unregister", { model_name: model, worker_id: 1 }), 200);
      expect(await loadsOf({ model })).toEqual([load(model, "default", 2, 0, 7, 1)]);
      await expectError(requestOp("/prefill_complete", { model }, "r1"), 404, "Request r1 not found");
      await expectOk(requestOp("/free", { model }, "r1"), 200);
      // The id is free again, and the worker comes back empty.
      await expectOk(register({ model }, 1), 201);
      await expectOk(add({ model }, "r1", 1, 0, [9], 1), 201);
      expect(await loadsOf({ model })).toEqual([
        load(model, "default", 1, 0, 1, 1),
        load(model, "default", 2, 0, 7, 1),
      ]);
    },
  );

  itBooking(
    "deletes the tracker with its last worker: add then gets no slot tracker, and another block size is accepted",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model }, 1, { blockSize: 16, dpSize: 2 }), 201);
      await expectOk(add({ model }, "r", 1, 1, [1, 2, 3], 8), 201);
      await expectOk(post("/unregister", { model_name: model, worker_id: 1 }), 200);
      await expectError(
        add({ model }, "r2", 1, 0, [1], 1),
        404,
        `no slot tracker for model=${model} tenant=default`,
      );
      await expectError(
        requestOp("/free", { model }, "r"),
        404,
        `no slot tracker for model=${model} tenant=default`,
      );
      expect(await workersOf({ model })).toEqual([]);
      expect(await loadsOf({ model })).toEqual([]);
      expect(await okJson(get("/workers", { model_name: model }))).toEqual([]);

      await expectOk(register({ model }, 1, { blockSize: 32, dpSize: 1 }), 201);
      expect(await workersOf({ model })).toEqual([
        { worker_id: 1, model_name: model, tenant_id: "default", block_size: 32, dp_start: 0, dp_size: 1 },
      ]);
      // Nothing of the old tracker survived: no load, and the old request id is not a duplicate.
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0)]);
      await expectOk(add({ model }, "r", 1, 0, [1], 2), 201);
      expect(await loadsOf({ model })).toEqual([load(model, "default", 1, 0, 2, 1)]);
    },
  );
});

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

describe("routing_group, the alias of tenant_id", () => {
  itBooking("is accepted in bodies and queries in place of tenant_id", async () => {
    const model = uniqueModel();
    const group = `g-${crypto.randomUUID()}`;
    await expectOk(
      post("/register", {
        model_name: model,
        routing_group: group,
        worker_id: 1,
        block_size: 16,
        dp_start: 0,
        dp_size: 1,
      }),
      201,
    );
    await expectOk(
      post("/add", {
        model_name: model,
        routing_group: group,
        request_id: "r",
        worker_id: 1,
        dp_rank: 0,
        sequence_hashes: [1, 2],
        new_isl_tokens: 4,
      }),
      201,
    );
    // Both spellings given and equal is fine.
    await expectOk(
      post("/prefill_complete", {
        model_name: model,
        tenant_id: group,
        routing_group: group,
        request_id: "r",
      }),
      200,
    );
    expect(
      await okJson(
        post("/potential_loads", { model_name: model, routing_group: group, sequence_hashes: [1] }),
      ),
    ).toEqual([
      {
        worker_id: 1,
        dp_rank: 0,
        potential_prefill_tokens: 0,
        potential_decode_blocks: 2,
        active_requests: 1,
      },
    ]);
    const rows = [load(model, group, 1, 0, 0, 2)];
    expect(await okJson(get("/loads", { model_name: model, routing_group: group }))).toEqual(rows);
    expect(await okJson(get("/loads", { routing_group: group }))).toEqual(rows);
    expect(
      await okJson(get("/loads", { model_name: model, tenant_id: group, routing_group: group })),
    ).toEqual(rows);
    expect(await okJson(get("/workers", { routing_group: group }))).toEqual([
      { worker_id: 1, model_name: model, tenant_id: group, block_size: 16, dp_start: 0, dp_size: 1 },
    ]);
    await expectOk(post("/free", { model_name: model, routing_group: group, request_id: "r" }), 200);
    await expectOk(post("/unregister", { model_name: model, routing_group: group, worker_id: 1 }), 200);
    expect(await okJson(get("/workers", { routing_group: group }))).toEqual([]);
  });

  itBooking(
    "answers 400 naming both fields when tenant_id and routing_group differ, in bodies and queries",
    async () => {
      const model = uniqueModel();
      await expectOk(register({ model, tenant: "a" }, 1), 201);
      await expectOk(register({ model, tenant: "b" }, 1), 201);
      const before = [await stateText({ model, tenant: "a" }), await stateText({ model, tenant: "b" })];
      const both = /tenant_id.*routing_group|routing_group.*tenant_id/;
      const scope = { model_name: model, tenant_id: "a", routing_group: "b" };
      await expectError(
        post("/register", { ...scope, worker_id: 2, block_size: 16, dp_start: 0, dp_size: 1 }),
        400,
        both,
      );
      await expectError(post("/unregister", { ...scope, worker_id: 1 }), 400, both);
      await expectError(
        post("/add", { ...scope, request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [1] }),
        400,
        both,
      );
      await expectError(post("/prefill_complete", { ...scope, request_id: "r" }), 400, both);
      await expectError(post("/free", { ...scope, request_id: "r" }), 400, both);
      await expectError(post("/potential_loads", { ...scope, sequence_hashes: [1] }), 400, both);
      await expectError(get("/workers", scope), 400, both);
      await expectError(get("/loads", scope), 400, both);
      await expectError(get("/loads", { tenant_id: "a", routing_group: "b" }), 400, both);
      expect([await stateText({ model, tenant: "a" }), await stateText({ model, tenant: "b" })]).toEqual(
        before,
      );
    },
  );
});

describe("GET /workers and GET /loads", () => {
  const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
  /** How an exact parse gives an id back: a number when it is safe, else a bigint. */
  const wire = (id: bigint) => (id <= MAX_SAFE ? Number(id) : id);
  /** Registered in this (scrambled) order; every worker has two ranks from its dp_start. */
  const FLEET = [
    { id: U64_MAX, dpStart: 2, everywhere: true },
    { id: 10n, dpStart: 0, everywhere: true },
    { id: ABOVE_2_53, dpStart: 6, everywhere: false },
    { id: 9n, dpStart: 4, everywhere: false },
  ];
  /** Numeric order; as decimal strings 10 < 18446744073709551615 < 9 < 9007199254740993. */
  const ID_ORDER = [9n, 10n, ABOVE_2_53, U64_MAX];

  /**
   * Four models whose names sort differently by UTF-8 bytes than by UTF-16 units (U+E000 is EE 80 80;
   * U+1F600 is F0 9F 98 80, but its first UTF-16 unit 0xD83D is below 0xE000), two tenants each.
   * Tenant `u…` has all four workers, tenant `t…` only the first two; worker 2^64−1 has a request on
   * rank 3. Returns every row the fleet should list, in the order the contract gives.
   */
  async function fleet() {
    const base = uniqueModel("fleet");
    const id = crypto.randomUUID();
    const [t, u] = [`t-${id}`, `u-${id}`];
    const [emoji, lower, privateUse, upper] = [
      `${base}-\u{1F600}`,
      `${base}-a`,
      `${base}-\uE000`,
      `${base}-B`,
    ];
    const trackers = [emoji, lower, privateUse, upper].flatMap((model) =>
      [u, t].map((tenant) => ({ model, tenant })),
    );
    for (const scope of trackers) {
      for (const w of FLEET) {
        if (w.everywhere || scope.tenant === u)
          await expectOk(register(scope, w.id, { dpStart: w.dpStart, dpSize: 2 }), 201);
      }
    }
    // Booked last: requests expire after 3 s in these tests.
    for (const scope of trackers) await expectOk(add(scope, "r", U64_MAX, 3, [1, 2], 3), 201);
    const models = [upper, lower, privateUse, emoji];
    const tenants = [t, u];
    const workers: WorkerRow[] = [];
    const loads: LoadRow[] = [];
    for (const model of models) {
      for (const tenant of tenants) {
        for (const workerId of ID_ORDER) {
          const w = FLEET.find((f) => f.id === workerId)!;
          if (!w.everywhere && tenant !== u) continue;
          workers.push({
            worker_id: wire(w.id),
            model_name: model,
            tenant_id: tenant,
            block_size: 16,
            dp_start: w.dpStart,
            dp_size: 2,
          });
          const busy = w.id === U64_MAX;
          loads.push(load(model, tenant, wire(w.id), w.dpStart));
          loads.push(load(model, tenant, wire(w.id), w.dpStart + 1, busy ? 3 : 0, busy ? 2 : 0));
        }
      }
    }
    return { base, models, tenants, workers, loads };
  }

  function mine<R extends { model_name: string }>(rows: unknown, base: string): R[] {
    return (rows as R[]).filter((row) => row.model_name.startsWith(base));
  }

  function compareIds(a: bigint | number, b: bigint | number): number {
    return BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
  }

  /** Every adjacent pair strictly ascending by (model bytes, tenant bytes, worker id, rank). */
  function expectSorted(rows: (WorkerRow | LoadRow)[]) {
    for (let i = 1; i < rows.length; i++) {
      const a = rows[i - 1]!;
      const b = rows[i]!;
      const order =
        compareBytes(a.model_name, b.model_name) ||
        compareBytes(a.tenant_id, b.tenant_id) ||
        compareIds(a.worker_id, b.worker_id) ||
        ("dp_rank" in a && "dp_rank" in b ? a.dp_rank - b.dp_rank : 0);
      expect(order, `rows ${i - 1} and ${i} out of order`).toBeLessThan(0);
    }
  }

  itBooking(
    "lists every tracker's workers and ranks unfiltered, sorted by model bytes, tenant bytes, worker id and rank",
    async () => {
      const { base, workers, loads } = await fleet();
      expect(workers).toHaveLength(4 * (2 + 4));
      expect(loads).toHaveLength(2 * workers.length);
      const allWorkers = (await okJson(get("/workers"))) as WorkerRow[];
      const allLoads = (await okJson(get("/loads"))) as LoadRow[];
      expect(mine<WorkerRow>(allWorkers, base)).toEqual(workers);
      expect(mine<LoadRow>(allLoads, base)).toEqual(loads);
      // Rows of the other tests' trackers in this file are interleaved in the same order.
      expectSorted(allWorkers);
      expectSorted(allLoads);
    },
  );

  itBooking("filters by model only, by tenant only, and by both", async () => {
    const { models, tenants, workers, loads } = await fleet();
    const model = models[2]!;
    const tenant = tenants[0]!;
    const ofModel = <R extends { model_name: string }>(rows: R[]) =>
      rows.filter((r) => r.model_name === model);
    const ofTenant = <R extends { tenant_id: string }>(rows: R[]) =>
      rows.filter((r) => r.tenant_id === tenant);
    expect(await okJson(get("/workers", { model_name: model }))).toEqual(ofModel(workers));
    expect(await okJson(get("/loads", { model_name: model }))).toEqual(ofModel(loads));
    expect(await okJson(get("/workers", { tenant_id: tenant }))).toEqual(ofTenant(workers));
    expect(await okJson(get("/loads", { tenant_id: tenant }))).toEqual(ofTenant(loads));
    expect(await okJson(get("/workers", { model_name: model, tenant_id: tenant }))).toEqual(
      ofTenant(ofModel(workers)),
    );
    expect(await okJson(get("/loads", { model_name: model, tenant_id: tenant }))).toEqual(
      ofTenant(ofModel(loads)),
    );
    // The filters really select: each result is a proper, non-empty part of the whole.
    expect(ofModel(workers)).toHaveLength(6);
    expect(ofTenant(workers)).toHaveLength(8);
    expect(ofTenant(ofModel(loads))).toHaveLength(4);
  });

  it("drops a tracker from every listing when its last worker leaves", async () => {
    const model = uniqueModel();
    const tenant = `t-${crypto.randomUUID()}`;
    await expectOk(register({ model, tenant }, 5), 201);
    expect(mine<WorkerRow>(await okJson(get("/workers")), model)).toHaveLength(1);
    expect(await okJson(get("/loads", { tenant_id: tenant }))).toEqual([load(model, tenant, 5, 0)]);
    await expectOk(post("/unregister", { model_name: model, tenant_id: tenant, worker_id: 5 }), 200);
    expect(mine<WorkerRow>(await okJson(get("/workers")), model)).toEqual([]);
    expect(mine<LoadRow>(await okJson(get("/loads")), model)).toEqual([]);
    expect(await okJson(get("/workers", { tenant_id: tenant }))).toEqual([]);
    expect(await okJson(get("/loads", { model_name: model }))).toEqual([]);
  });

  it("lists nothing for a model or tenant that has no tracker", async () => {
    const model = uniqueModel();
    expect(await okJson(get("/workers", { model_name: model }))).toEqual([]);
    expect(await okJson(get("/loads", { model_name: model }))).toEqual([]);
    expect(await okJson(get("/workers", { tenant_id: model }))).toEqual([]);
    expect(await okJson(get("/loads", { model_name: model, tenant_id: "default" }))).toEqual([]);
  });
});

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
