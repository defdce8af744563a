import { exports } from "cloudflare:workers";
import { decode, encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";

/** `exports.default` is typed only when GlobalProps names the main module; its runtime shape is a Fetcher. */
const worker = (exports as unknown as { default: Fetcher }).default;

const model = () => `batch-${crypto.randomUUID()}`;

async function post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await worker.fetch(
    new Request(`http://x${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    }),
  );
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text) };
}

async function loadsOf(modelName: string) {
  const res = await worker.fetch(new Request(`http://x/loads?model_name=${modelName}`));
  expect(res.status).toBe(200);
  const rows = (await res.json()) as { model_name: string; active_decode_blocks: number }[];
  return rows.map(({ model_name: _, ...row }) => row);
}

async function register(modelName: string) {
  for (const worker_id of [7, 9]) {
    const res = await post("/register", {
      worker_id,
      model_name: modelName,
      block_size: 16,
      dp_start: 0,
      dp_size: 2,
    });
    expect(res.status).toBe(201);
  }
}

/** A mix of every op and every per-op outcome a lifecycle route can give. */
const OPS = [
  { op: "add", request_id: "a", worker_id: 7, dp_rank: 0, sequence_hashes: [1, 2, 3], new_isl_tokens: 40 },
  { op: "add", request_id: "b", worker_id: 7, dp_rank: 1, sequence_hashes: [1, 2, 9], new_isl_tokens: 10 },
  { op: "add", request_id: "c", worker_id: 9, dp_rank: 0, sequence_hashes: [-1, 5], new_isl_tokens: 7 },
  { op: "add", request_id: "a", worker_id: 9, dp_rank: 1, sequence_hashes: [4] },
  { op: "add", request_id: "d", worker_id: 9, dp_rank: 5, sequence_hashes: [4] },
  { op: "add", request_id: "e", worker_id: 123, dp_rank: 0, sequence_hashes: [4] },
  { op: "prefill_complete", request_id: "a" },
  { op: "prefill_complete", request_id: "a" },
  { op: "prefill_complete", request_id: "zz" },
  { op: "free", request_id: "b" },
  { op: "free", request_id: "never-added" },
  { op: "add", request_id: "b", worker_id: 9, dp_rank: 1, sequence_hashes: [1, 2, 3, 4], new_isl_tokens: 3 },
];

const ROUTE_OF = { add: "/add", prefill_complete: "/prefill_complete", free: "/free" } as const;

describe("POST /batch", () => {
  it("answers each op as its own route would and leaves the same loads as the ops sent one by one", async () => {
    const [batched, single] = [model(), model()];
    await register(batched);
    await register(single);

    const answer = await post("/batch", { model_name: batched, ops: OPS });
    expect(answer.status).toBe(200);

    const oneByOne = [];
    for (const { op, ...fields } of OPS) {
      const res = await post(ROUTE_OF[op as keyof typeof ROUTE_OF], { model_name: single, ...fields });
      const error = (res.body as { error?: string } | null)?.error;
      oneByOne.push(error === undefined ? { status: res.status } : { status: res.status, error });
    }
    expect((answer.body as { results: unknown[] }).results).toEqual(oneByOne);
    expect(oneByOne.map((r) => r.status)).toEqual([
      201, 201, 201, 409, 404, 404, 200, 200, 404, 200, 200, 201,
    ]);
    expect(oneByOne[3]).toEqual({
      status: 409,
      error: "Request a already exists (assigned to worker WorkerWithDpRank { worker_id: 7, dp_rank: 0 })",
    });

    expect(await loadsOf(batched)).toEqual(await loadsOf(single));
    const query = { sequence_hashes: [1, 2, 3, 8], new_isl_tokens: 5 };
    const potential = await post("/potential_loads", { model_name: batched, ...query });
    expect(potential.status).toBe(200);
    expect(potential.body).toEqual((await post("/potential_loads", { model_name: single, ...query })).body);
  });

  it("answers a per-op 404 naming the tracker when the model has no workers, like the single routes", async () => {
    const name = model();
    const answer = await post("/batch", {
      model_name: name,
      tenant_id: "t1",
      ops: [
        { op: "add", request_id: "a", worker_id: 1, dp_rank: 0, sequence_hashes: [1] },
        { op: "free", request_id: "a" },
      ],
    });
    const error = `no slot tracker for model=${name} tenant=t1`;
    expect(answer).toEqual({
      status: 200,
      body: {
        results: [
          { status: 404, error },
          { status: 404, error },
        ],
      },
    });
    expect((await post("/free", { model_name: name, tenant_id: "t1", request_id: "a" })).body).toEqual({
      error,
    });
  });

  it("refuses the whole batch with 422 naming the first bad op's field, and applies none of it", async () => {
    const name = model();
    await register(name);
    const before = await loadsOf(name);
    const ops = [...OPS.slice(0, 3), { op: "free" }, ...OPS.slice(3)];
    expect(await post("/batch", { model_name: name, ops })).toEqual({
      status: 422,
      body: { error: "missing field `ops[3].request_id`" },
    });
    const badOp = [OPS[0], { op: "evict", request_id: "a" }];
    const refused = await post("/batch", { model_name: name, ops: badOp });
    expect(refused.status).toBe(422);
    expect((refused.body as { error: string }).error).toMatch(/^field `ops\[1\]\.op`: expected one of "add"/);
    const badHash = [OPS[0], { ...OPS[1], sequence_hashes: [1, 2.5] }];
    expect((await post("/batch", { model_name: name, ops: badHash })).body).toEqual({
      error:
        "field `ops[1].sequence_hashes[1]`: expected a 64-bit integer (-9223372036854775808..18446744073709551615)",
    });
    expect(await loadsOf(name)).toEqual(before);
  });

  it("takes 4,096 ops in one call and refuses 4,097 with 413 naming the cap", async () => {
    const name = model();
    await register(name);
    const adds = Array.from({ length: 100 }, (_, i) => ({
      op: "add",
      request_id: `r${i}`,
      worker_id: 7,
      dp_rank: i % 2,
      sequence_hashes: [i, i + 1],
    }));
    const frees = Array.from({ length: 4_096 - 100 }, (_, i) => ({ op: "free", request_id: `r${i}` }));
    const full = await post("/batch", { model_name: name, ops: [...adds, ...frees] });
    expect(full.status).toBe(200);
    const results = (full.body as { results: { status: number }[] }).results;
    expect(results).toHaveLength(4_096);
    expect(results.filter((r) => r.status === 201)).toHaveLength(100);
    expect((await loadsOf(name)).every((row) => row.active_decode_blocks === 0)).toBe(true);

    const over = await post("/batch", {
      model_name: name,
      ops: [...adds, ...frees, { op: "free", request_id: "x" }],
    });
    expect(over).toEqual({
      status: 413,
      body: { error: "field `ops`: at most 4096 items allowed, got 4097" },
    });
  });

  it("takes and answers MessagePack, with 64-bit worker ids and hashes exact", async () => {
    const name = model();
    const workerId = 2n ** 64n - 2n;
    const registered = await post("/register", {
      model_name: name,
      block_size: 16,
      dp_start: 0,
      dp_size: 1,
      worker_id: 1,
    });
    expect(registered.status).toBe(201);
    const msgpack = (value: unknown) =>
      worker.fetch(
        new Request("http://x/batch", {
          method: "POST",
          body: encode(value, { useBigInt64: true }),
          headers: { "content-type": "application/msgpack", accept: "application/msgpack" },
        }),
      );
    const res = await msgpack({
      model_name: name,
      ops: [
        { op: "add", request_id: "big", worker_id: workerId, dp_rank: 0, sequence_hashes: [2n ** 63n, -2n] },
        { op: "add", request_id: "ok", worker_id: 1n, dp_rank: 0, sequence_hashes: [2n ** 63n, -2n, 3n] },
        { op: "free", request_id: "big" },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/msgpack");
    expect(decode(new Uint8Array(await res.arrayBuffer()), { useBigInt64: true })).toEqual({
      results: [
        { status: 404, error: `Worker WorkerWithDpRank { worker_id: ${workerId}, dp_rank: 0 } not found` },
        { status: 201 },
        { status: 200 },
      ],
    });
    expect(await loadsOf(name)).toEqual([
      { tenant_id: "default", worker_id: 1, dp_rank: 0, active_prefill_tokens: 0, active_decode_blocks: 3 },
    ]);
  });
});
