import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { trackerName } from "../../durable-objects/naming";
import { waitFor } from "../workers/helpers";

const REPLICAS = ["east", "west", "apac"] as const;
type Replica = (typeof REPLICAS)[number];
const worker = (exports as unknown as { default: Fetcher }).default;

async function call(replica: Replica, method: string, path: string, body?: string) {
  const res = await worker.fetch(
    new Request(`http://x${path}`, {
      method,
      headers: { "x-slot-tracker-replica": replica, ...(body ? { "content-type": "application/json" } : {}) },
      body,
    }),
  );
  return { status: res.status, text: await res.text() };
}

const post = (replica: Replica, path: string, body: string) => call(replica, "POST", path, body);
const loads = async (replica: Replica, model: string) =>
  (await call(replica, "GET", `/loads?model_name=${model}`)).text;
const workers = async (replica: Replica, model: string) =>
  (await call(replica, "GET", `/workers?model_name=${model}`)).text;

/** Polls until every replica answers `read` identically; returns how long that took. */
async function converged(read: (r: Replica) => Promise<string>, timeoutMs = 10_000): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    const views = await Promise.all(REPLICAS.map(read));
    if (views.every((v) => v === views[0])) return Date.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const views = await Promise.all(REPLICAS.map(read));
  console.log(REPLICAS.map((r, i) => `${r}: ${views[i]}`).join("\n"));
  for (const r of REPLICAS)
    console.log(r, (await call(r, "GET", `/replica_sync/peers?model_name=${lastModel}`)).text);
  expect(views[1]).toBe(views[0]);
  expect(views[2]).toBe(views[0]);
  return Date.now() - start;
}

const stubOf = (replica: Replica, model: string) =>
  env.TRACKER.getByName(trackerName({ replica, model, tenant: "default" }));

let lastModel = "";
function unique(): string {
  lastModel = `m-${crypto.randomUUID()}`;
  return lastModel;
}

describe("replication between three replicas", () => {
  it("shows an add accepted at one replica in the others' loads within a flush", async () => {
    const m = unique();
    expect(
      (
        await post(
          "east",
          "/register",
          `{"worker_id":1,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":2}`,
        )
      ).status,
    ).toBe(201);
    await converged((r) => workers(r, m));
    expect(
      (
        await post(
          "east",
          "/add",
          `{"model_name":"${m}","request_id":"a","worker_id":1,"dp_rank":1,"sequence_hashes":[1,2,3],"new_isl_tokens":8}`,
        )
      ).status,
    ).toBe(201);
    const elapsed = await converged((r) => loads(r, m));
    expect(elapsed).toBeLessThan(1_000);
    expect(await loads("apac", m)).toContain(
      `"dp_rank":1,"active_prefill_tokens":8,"active_decode_blocks":3`,
    );
  });

  it("frees everywhere a request added at one replica and freed at another, even before that one saw the add", async () => {
    const m = unique();
    await post(
      "west",
      "/register",
      `{"worker_id":5,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":1}`,
    );
    await converged((r) => workers(r, m));
    await post(
      "east",
      "/add",
      `{"model_name":"${m}","request_id":"r","worker_id":5,"dp_rank":0,"sequence_hashes":[7,8],"new_isl_tokens":3}`,
    );
    // Sent at once, so west usually has not seen the add yet: its free must still win everywhere.
    expect((await post("west", "/free", `{"model_name":"${m}","request_id":"r"}`)).status).toBe(200);
    await converged((r) => loads(r, m));
    for (const r of REPLICAS)
      expect(await loads(r, m)).toContain(`"active_prefill_tokens":0,"active_decode_blocks":0`);
  });

  it("replicates registrations, prefill completions and unregistrations", async () => {
    const m = unique();
    await post(
      "apac",
      "/register",
      `{"worker_id":9,"model_name":"${m}","block_size":32,"dp_start":2,"dp_size":2}`,
    );
    await post(
      "apac",
      "/register",
      `{"worker_id":10,"model_name":"${m}","block_size":32,"dp_start":0,"dp_size":1}`,
    );
    await converged((r) => workers(r, m));
    expect(JSON.parse(await workers("east", m))).toHaveLength(2);
    await post(
      "west",
      "/add",
      `{"model_name":"${m}","request_id":"p","worker_id":9,"dp_rank":3,"sequence_hashes":[1],"new_isl_tokens":50}`,
    );
    await converged((r) => loads(r, m));
    expect((await post("east", "/prefill_complete", `{"model_name":"${m}","request_id":"p"}`)).status).toBe(
      200,
    );
    await converged((r) => loads(r, m));
    expect(await loads("west", m)).toContain(
      `"worker_id":9,"dp_rank":3,"active_prefill_tokens":0,"active_decode_blocks":1`,
    );
    expect((await post("east", "/unregister", `{"worker_id":9,"model_name":"${m}"}`)).status).toBe(200);
    await converged((r) => workers(r, m));
    expect(JSON.parse(await workers("apac", m))).toEqual([
      { worker_id: 10, model_name: m, tenant_id: "default", block_size: 32, dp_start: 0, dp_size: 1 },
    ]);
  });

  it("loses nothing when every object is reset in the middle of a stream", async () => {
    const m = unique();
    await post(
      "east",
      "/register",
      `{"worker_id":1,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":4}`,
    );
    for (let i = 0; i < 60; i++) {
      if (i === 30) await abortAllDurableObjects();
      const status = (
        await post(
          REPLICAS[i % 3]!,
          "/add",
          `{"model_name":"${m}","request_id":"q${i}","worker_id":1,"dp_rank":${i % 4},"sequence_hashes":[${i % 5},${i}],"new_isl_tokens":1}`,
        )
      ).status;
      expect(status).toBe(201);
    }
    await converged((r) => loads(r, m));
    const rows = JSON.parse(await loads("west", m)) as { active_prefill_tokens: number }[];
    expect(rows.reduce((sum, row) => sum + row.active_prefill_tokens, 0)).toBe(60);
  });

  it("repairs a replica that lost its state with a snapshot, and converges", async () => {
    const m = unique();
    await post(
      "east",
      "/register",
      `{"worker_id":1,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":1}`,
    );
    await post(
      "apac",
      "/register",
      `{"worker_id":2,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":1}`,
    );
    for (let i = 0; i < 10; i++) {
      await post(
        "east",
        "/add",
        `{"model_name":"${m}","request_id":"s${i}","worker_id":${1 + (i % 2)},"dp_rank":0,"sequence_hashes":[${i}],"new_isl_tokens":2}`,
      );
    }
    await converged((r) => loads(r, m));
    // West loses everything it had, stream positions included: east's next batch shows a gap.
    await runInDurableObject(stubOf("west", m), (_instance, state) => state.storage.deleteAll());
    await abortAllDurableObjects();
    expect(JSON.parse(await workers("west", m))).toEqual([]);
    await post(
      "east",
      "/add",
      `{"model_name":"${m}","request_id":"after","worker_id":1,"dp_rank":0,"sequence_hashes":[99],"new_isl_tokens":1}`,
    );
    await converged((r) => loads(r, m));
    await converged((r) => workers(r, m));
    expect(await loads("west", m)).toContain(
      `"worker_id":2,"dp_rank":0,"active_prefill_tokens":10,"active_decode_blocks":5`,
    );
  });

  it("resyncs by snapshot a peer that fell behind past the outbox cap while unreachable", async () => {
    const m = unique();
    await post(
      "east",
      "/register",
      `{"worker_id":1,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":1}`,
    );
    await converged((r) => workers(r, m));
    // West refuses every batch for a while, as an unreachable peer would (until its next reset).
    await runInDurableObject(stubOf("west", m), (instance) => {
      const sync = (instance as unknown as { sync: { receive: () => never } }).sync;
      sync.receive = () => {
        throw new Error("unreachable");
      };
    });
    for (let i = 0; i < 50; i++) {
      await post(
        "east",
        "/add",
        `{"model_name":"${m}","request_id":"u${i}","worker_id":1,"dp_rank":0,"sequence_hashes":[${i}],"new_isl_tokens":1}`,
      );
    }
    const status = JSON.parse((await call("east", "GET", `/replica_sync/peers?model_name=${m}`)).text) as {
      peers: { peer: string; state: string; queued_events: number }[];
    };
    const west = status.peers.find((p) => p.peer === "west")!;
    expect(west.state).toBe("resync");
    expect(west.queued_events).toBeGreaterThan(40);
    await abortAllDurableObjects();
    await converged((r) => loads(r, m), 40_000);
    expect(await loads("west", m)).toContain(`"active_prefill_tokens":50,"active_decode_blocks":50`);
    // West has applied everything; east learns it from the answer to its last batch, a moment later.
    const peersAtEast = async () => {
      const { peers } = JSON.parse(
        (await call("east", "GET", `/replica_sync/peers?model_name=${m}`)).text,
      ) as {
        peers: { peer: string; state: string; queued_events: number }[];
      };
      return peers.map((p) => [p.peer, p.state, p.queued_events]);
    };
    await waitFor(async () => (await peersAtEast()).every(([, , queued]) => queued === 0), 20_000);
    expect(await peersAtEast()).toEqual([
      ["apac", "ok", 0],
      ["west", "ok", 0],
    ]);
  });

  it("keeps a session on its worker at another replica: bindings replicate", async () => {
    const m = unique();
    const card = `"router_config":{"router_mode":"kv","session_affinity_ttl_secs":600}`;
    for (const id of [1, 2, 3, 4]) {
      await post(
        "east",
        "/register",
        `{"worker_id":${id},"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":1,${card}}`,
      );
    }
    await converged((r) => workers(r, m));
    const first = await post(
      "east",
      "/route",
      `{"model_name":"${m}","request_id":"r0","session_id":"chat","sequence_hashes":[1,2,3,4],"new_isl_tokens":64}`,
    );
    expect(first.status).toBe(201);
    const bound = (JSON.parse(first.text) as { worker_id: number }).worker_id;
    await converged((r) => loads(r, m));
    // The bound worker is now the most loaded one: only the replicated binding sends west's routes there.
    for (let i = 1; i <= 3; i++) {
      const next = await post(
        "west",
        "/route",
        `{"model_name":"${m}","request_id":"r${i}","session_id":"chat","sequence_hashes":[9,${i}],"new_isl_tokens":64}`,
      );
      expect(next.status).toBe(201);
      expect((JSON.parse(next.text) as { worker_id: number }).worker_id).toBe(bound);
    }
    const other = await post(
      "west",
      "/route",
      `{"model_name":"${m}","request_id":"x","session_id":"other","sequence_hashes":[5],"new_isl_tokens":64}`,
    );
    expect((JSON.parse(other.text) as { worker_id: number }).worker_id).not.toBe(bound);
  });
});
