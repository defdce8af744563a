import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { waitFor } from "../workers/helpers";
import { converged, REPLICAS, type Replica, stubOf } from "./fault-helpers";

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

/** Posts and expects `status`: a refused write must fail the test where it happens, not vanish. */
async function accepted(replica: Replica, path: string, body: string, status = 201) {
  const answer = await post(replica, path, body);
  expect(answer.status, `${path} at ${replica}: ${answer.text}`).toBe(status);
}

/** Each replica's stored session bindings, so a test can wait for a binding rather than assume it. */
const bindings = (replica: Replica, model: string) =>
  runInDurableObject(stubOf(replica, model), (_instance, state) =>
    state.storage.sql
      .exec(
        "SELECT session_id, hop, dp_rank, hex(worker_id) AS worker FROM session_bindings ORDER BY session_id, hop",
      )
      .toArray(),
  );

const unique = () => `m-${crypto.randomUUID()}`;

describe("replication between three replicas", () => {
  it("shows an add accepted at one replica in the others' loads", async () => {
    const m = unique();
    await accepted(
      "east",
      "/register",
      `{"worker_id":1,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":2}`,
    );
    await converged((r) => workers(r, m));
    await accepted(
      "east",
      "/add",
      `{"model_name":"${m}","request_id":"a","worker_id":1,"dp_rank":1,"sequence_hashes":[1,2,3],"new_isl_tokens":8}`,
    );
    // How fast it arrives is the benchmark's to say (paced p99); here only that it does, intact.
    await converged((r) => loads(r, m));
    expect(await loads("apac", m)).toContain(
      `"dp_rank":1,"active_prefill_tokens":8,"active_decode_blocks":3`,
    );
  });

  it("frees everywhere a request added at one replica and freed at another, whether or not that one saw the add", async () => {
    const m = unique();
    await accepted(
      "west",
      "/register",
      `{"worker_id":5,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":1}`,
    );
    await converged((r) => workers(r, m));
    await accepted(
      "east",
      "/add",
      `{"model_name":"${m}","request_id":"r","worker_id":5,"dp_rank":0,"sequence_hashes":[7,8],"new_isl_tokens":3}`,
    );
    // Sent at once: west may or may not have seen the add yet, and its free must win everywhere
    // either way (the unit tests of the merge rules take each order on purpose).
    await accepted("west", "/free", `{"model_name":"${m}","request_id":"r"}`, 200);
    await converged((r) => loads(r, m));
    for (const r of REPLICAS)
      expect(await loads(r, m)).toContain(`"active_prefill_tokens":0,"active_decode_blocks":0`);
  });

  it("replicates registrations, prefill completions and unregistrations", async () => {
    const m = unique();
    await accepted(
      "apac",
      "/register",
      `{"worker_id":9,"model_name":"${m}","block_size":32,"dp_start":2,"dp_size":2}`,
    );
    await accepted(
      "apac",
      "/register",
      `{"worker_id":10,"model_name":"${m}","block_size":32,"dp_start":0,"dp_size":1}`,
    );
    await converged((r) => workers(r, m));
    expect(JSON.parse(await workers("east", m))).toHaveLength(2);
    await accepted(
      "west",
      "/add",
      `{"model_name":"${m}","request_id":"p","worker_id":9,"dp_rank":3,"sequence_hashes":[1],"new_isl_tokens":50}`,
    );
    await converged((r) => loads(r, m));
    await accepted("east", "/prefill_complete", `{"model_name":"${m}","request_id":"p"}`, 200);
    await converged((r) => loads(r, m));
    expect(await loads("west", m)).toContain(
      `"worker_id":9,"dp_rank":3,"active_prefill_tokens":0,"active_decode_blocks":1`,
    );
    await accepted("east", "/unregister", `{"worker_id":9,"model_name":"${m}"}`, 200);
    await converged((r) => workers(r, m));
    expect(JSON.parse(await workers("apac", m))).toEqual([
      { worker_id: 10, model_name: m, tenant_id: "default", block_size: 32, dp_start: 0, dp_size: 1 },
    ]);
  });

  it("loses nothing when every object is reset in the middle of a stream", async () => {
    const m = unique();
    await accepted(
      "east",
      "/register",
      `{"worker_id":1,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":4}`,
    );
    // Every replica must know the worker before it is booked there: a replica that has not yet
    // received the registration refuses the booking with 404, as it should.
    await converged((r) => workers(r, m));
    for (let i = 0; i < 60; i++) {
      if (i === 30) await abortAllDurableObjects();
      await accepted(
        REPLICAS[i % 3]!,
        "/add",
        `{"model_name":"${m}","request_id":"q${i}","worker_id":1,"dp_rank":${i % 4},"sequence_hashes":[${i % 5},${i}],"new_isl_tokens":1}`,
      );
    }
    await converged((r) => loads(r, m));
    const rows = JSON.parse(await loads("west", m)) as { active_prefill_tokens: number }[];
    expect(rows.reduce((sum, row) => sum + row.active_prefill_tokens, 0)).toBe(60);
  });

  it("repairs a replica that lost its state with a snapshot, and converges", async () => {
    const m = unique();
    await accepted(
      "east",
      "/register",
      `{"worker_id":1,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":1}`,
    );
    await accepted(
      "apac",
      "/register",
      `{"worker_id":2,"model_name":"${m}","block_size":16,"dp_start":0,"dp_size":1}`,
    );
    // East books worker 2, registered at apac: it must have received that registration first.
    await converged((r) => workers(r, m));
    for (let i = 0; i < 10; i++) {
      await accepted(
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
    await accepted(
      "east",
      "/add",
      `{"model_name":"${m}","request_id":"after","worker_id":1,"dp_rank":0,"sequence_hashes":[99],"new_isl_tokens":1}`,
    );
    await converged((r) => loads(r, m));
    await converged((r) => workers(r, m));
    expect(await loads("west", m)).toContain(
      `"worker_id":2,"dp_rank":0,"active_prefill_tokens":10,"active_decode_blocks":5`,
    );
    expect(await loads("west", m)).toContain(
      `"worker_id":1,"dp_rank":0,"active_prefill_tokens":11,"active_decode_blocks":6`,
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
      await accepted(
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
      await accepted(
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
    // The binding is an event of its own: wait for it too rather than infer it from the loads.
    const [binding] = await converged((r) => bindings(r, m));
    expect(binding).toMatchObject({ session_id: "chat", hop: "decode" });
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
