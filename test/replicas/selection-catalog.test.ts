import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { converged, type Replica } from "./fault-helpers";

/**
 * The catalog across three replicas: a write at one reaches the others, which list byte-identical
 * records, put the same ranks in their slot trackers, keep and drop the same bookings, and find the
 * worker by id through their own directory. Every read of another replica waits for convergence.
 */

const worker = (exports as unknown as { default: Fetcher }).default;

async function call(replica: Replica, method: string, path: string, body?: unknown) {
  const res = await worker.fetch(
    new Request(`http://x${path}`, {
      method,
      headers: {
        "x-slot-tracker-replica": replica,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  return { status: res.status, text: await res.text() };
}

async function accepted(replica: Replica, method: string, path: string, body: unknown, status: number) {
  const answer = await call(replica, method, path, body);
  expect(answer.status, `${method} ${path} at ${replica}: ${answer.text}`).toBe(status);
  return answer.text;
}

const catalog = async (replica: Replica, model: string) =>
  (await call(replica, "GET", `/selection/workers?model_name=${model}`)).text;
const loads = async (replica: Replica, model: string, group = "default") =>
  (await call(replica, "GET", `/loads?model_name=${model}&tenant_id=${group}`)).text;

const unique = () => `catalog-${crypto.randomUUID()}`;

describe("the catalog across replicas", () => {
  it("lists a record written at one replica identically at every replica, and its ranks in /workers", async () => {
    const model = unique();
    const body = { worker_id: 7, model_name: model, endpoint: "http://w", block_size: 16 };
    const written = await accepted("east", "POST", "/selection/workers", body, 201);
    const seen = await converged((r) => catalog(r, model));
    expect(seen).toBe(`[${written}]`);
    const workers = await converged(async (r) => (await call(r, "GET", `/workers?model_name=${model}`)).text);
    expect(workers).toContain('"worker_id":7');
  });

  it("finds the worker by id at another replica once the record arrived, and a DP range change there keeps and drops bookings everywhere alike", async () => {
    const model = unique();
    await accepted(
      "east",
      "POST",
      "/selection/workers",
      { worker_id: 3, model_name: model, endpoint: "http://w3", block_size: 16, data_parallel_size: 4 },
      201,
    );
    for (const rank of [0, 1, 2, 3]) {
      const add = {
        model_name: model,
        request_id: `r${rank}`,
        worker_id: 3,
        dp_rank: rank,
        sequence_hashes: [rank + 1],
        new_isl_tokens: 10,
      };
      await accepted("east", "POST", "/add", add, 201);
    }
    await converged((r) => loads(r, model));
    // West's directory learnt the worker from the replicated record: the PATCH there finds it.
    await accepted(
      "west",
      "PATCH",
      "/selection/workers/3",
      { data_parallel_start_rank: 2, data_parallel_size: 3 },
      200,
    );
    const after = await converged((r) => loads(r, model));
    expect(
      (JSON.parse(after) as { dp_rank: number; active_prefill_tokens: number }[]).map((row) => [
        row.dp_rank,
        row.active_prefill_tokens,
      ]),
    ).toEqual([
      [2, 10],
      [3, 10],
      [4, 0],
    ]);
    expect(await converged((r) => catalog(r, model))).toContain(
      '"data_parallel_start_rank":2,"data_parallel_size":3',
    );
  });

  it("removes a worker deleted at one replica from every replica's catalog and slot tracker", async () => {
    const model = unique();
    await accepted(
      "apac",
      "POST",
      "/selection/workers",
      { worker_id: 11, model_name: model, endpoint: "http://w", block_size: 16 },
      201,
    );
    await converged((r) => catalog(r, model));
    const removed = await accepted("east", "DELETE", "/selection/workers/11", undefined, 200);
    expect(removed).toContain('"lifecycle":"unschedulable"');
    expect(await converged((r) => catalog(r, model))).toBe("[]");
    expect(await converged((r) => loads(r, model))).toBe("[]");
  });

  it("moves a worker between partitions, and every replica ends with it in the new one only", async () => {
    const model = unique();
    await accepted(
      "west",
      "POST",
      "/selection/workers",
      { worker_id: 21, model_name: model, routing_group: "a", endpoint: "http://w", block_size: 16 },
      201,
    );
    await converged((r) => catalog(r, model));
    await accepted(
      "west",
      "POST",
      "/selection/workers",
      { worker_id: 21, model_name: model, routing_group: "b", endpoint: "http://w", block_size: 16 },
      201,
    );
    const moved = JSON.parse(await converged((r) => catalog(r, model))) as { routing_group: string }[];
    expect(moved.map((record) => record.routing_group)).toEqual(["b"]);
  });
});

describe("replica peers", () => {
  it("lists the other replicas by name, sorted, and refuses peer registration naming REPLICAS", async () => {
    expect(JSON.parse((await call("east", "GET", "/selection/replica_sync/peers")).text)).toEqual([
      "apac",
      "west",
    ]);
    expect(JSON.parse((await call("west", "GET", "/selection/replica_sync/peers")).text)).toEqual([
      "apac",
      "east",
    ]);
    for (const path of ["/selection/replica_sync/register_peer", "/selection/replica_sync/deregister_peer"]) {
      const refused = await call("east", "POST", path, { endpoint: "tcp://peer:9092" });
      expect(refused.status).toBe(409);
      expect(JSON.parse(refused.text).error).toMatch(/REPLICAS \(east, west, apac\)/);
    }
  });
});
