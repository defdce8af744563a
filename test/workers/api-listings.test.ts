/**
 * GET /workers and GET /loads across trackers: unfiltered, by model, by tenant or both, sorted by
 * model bytes, tenant bytes, worker id and rank; a tracker leaves every listing with its last worker.
 */
import { describe, expect, it } from "vitest";
import { add, compareBytes, expectOk, get, itBooking, okJson, post, register, uniqueModel } from "./api-http";
import { ABOVE_2_53, load, type LoadRow, U64_MAX, type WorkerRow } from "./api-rows";

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
