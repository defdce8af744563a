import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClientError, SelectionClient } from "./dynamo-selection-client/client";
import {
  activeRequests,
  BLOCK,
  idle,
  loads,
  MODEL,
  RANKS,
  STALE,
  STALE_REG,
  startWorker,
  tokens,
  UUID_V4,
  W1,
  W1_REG,
  W2,
  W2_REG,
  type Worker,
} from "./dynamo-selection-client/fleet-fixture";
import { parseJson } from "./dynamo-selection-client/json";
import {
  bookingFacts,
  type ExplicitReservation,
  reservationResponse,
  statusOk,
} from "./dynamo-selection-client/wire";

/**
 * Dynamo's own HTTP clients of its selection service, pointed at `<worker>/selection` of the real
 * Worker under wrangler's local runtime (as `wrangler dev`), over real HTTP, for aggregated serving:
 *
 * - the EPP's router-only http mode, `deploy/inference-gateway/ext-proc/src/selector_client.rs`
 *   (`SelectorClient`, and `SelectorFleet`'s reconcile, `/ready` gate, peer mesh, `/select` and, in
 *   the later fleet, `/select_and_reserve`) with the wire types of
 *   `deploy/inference-gateway/ext-proc/src/selection_backend.rs`;
 * - the "Ray Select-Then-Reserve Flow" of `docs/components/router/standalone-selection.md`
 *   (`/select` with a `selection_id`, the cached replay and explicit `/reservations`, then
 *   `prefill_complete` and `DELETE`), and the booking facts `/select_and_reserve` returns for a peer's
 *   explicit replay (Dynamo PR #12335).
 *
 * The Worker runs with `wrangler.toml`'s vars: one replica (`REPLICAS = "primary"`), so the peer
 * replay is checked as one replica can check it (the facts rebuild the booking; the booked id is a
 * 409) and the peer mesh answers 409, which the fleet takes as "sync disabled".
 *
 * The service breaks ties between equal ranks at random and a Dynamo client sends no seed, so every
 * assertion on a choice either holds for any tie-break or is made where the cost leaves one rank:
 * `allowed_worker_ids` naming a one-rank worker, a rank that alone caches the prompt, or the one
 * rank left unloaded.
 */

let worker: Worker;
let client: SelectionClient;

beforeAll(async () => {
  worker = await startWorker();
  // A trailing slash, as an operator may write it: `SelectorClient::new` trims it.
  client = new SelectionClient(new URL("/selection/", await worker.url).href);
});

afterAll(async () => {
  await worker?.dispose();
});

describe("the EPP's selector fleet, against one replica", () => {
  it("gates on /ready while nothing is schedulable, then reconciles: stale worker deleted, registrations upserted once, routable", async () => {
    expect(await client.ready()).toBe(false);
    expect(client.calls.at(-1)?.status).toBe(503);
    await client.upsertWorker(STALE_REG);

    const first = await client.reconcile([W1_REG, W2_REG]);
    expect(first).toEqual({ upserted: [W1, W2], deleted: [STALE], routable: true });
    // The records echo every field the EPP owns, so the next pass writes nothing (no re-POST churn).
    const second = await client.reconcile([W1_REG, W2_REG]);
    expect(second).toEqual({ upserted: [], deleted: [], routable: true });

    const catalog = await client.getWorkers();
    // Sorted by worker id as a number (2^53 + 1 before 2^64 − 59), as Dynamo lists them.
    expect([...catalog.keys()]).toEqual([W2, W1]);
    expect(catalog.get(W1)).toMatchObject({
      worker_id: W1,
      data_parallel_size: 2n,
      total_kv_blocks: 1000n,
      kv_events_endpoints: new Map([
        [0n, "tcp://10.0.0.1:5557"],
        [1n, "tcp://10.0.0.1:5558"],
      ]),
    });
    const upserts = client.calls.filter((c) => c.method === "POST" && c.path === "/workers");
    expect(upserts.map((c) => c.status)).toEqual([201, 201, 201]);
    expect(upserts[1]?.body).toContain(`"worker_id":${W1},`);
  });

  it("takes a 404 for a worker the replica no longer has as a successful delete", async () => {
    const answer = await client.deleteWorker(STALE);
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toEqual({ error: `worker ${STALE} not found` });
  });

  it("wires the peer mesh and hears 409 both ways, which it takes as replica sync disabled", async () => {
    expect(await client.peerOp("register_peer", "tcp://10.0.0.9:9092")).toBe("sync disabled");
    expect(await client.peerOp("deregister_peer", "tcp://10.0.0.9:9092")).toBe("sync disabled");
  });

  it("selects query-only: allowed_worker_ids pins the choice, the 64-bit id is exact and nothing is booked", async () => {
    const pinned = await client.select({
      model_name: MODEL,
      selection_id: "epp-q-1",
      token_ids: tokens(1000, 64),
      allowed_worker_ids: [W2],
      priority_jump: 0.5,
      strict_priority: 1,
    });
    expect(pinned).toEqual({
      selection_id: "epp-q-1",
      worker_id: W2,
      dp_rank: 0n,
      endpoint: W2_REG.endpoint,
      block_size: BigInt(BLOCK),
      overlap: { longest_matched: 0n, gpu: 0n, cpu: 0n, disk: 0n },
      effective_prefill_tokens: 64n,
    });
    const free = await client.select({ model_name: MODEL, token_ids: tokens(2000, 20) });
    expect(free.selection_id).toBeUndefined();
    expect(RANKS).toContain(`${free.worker_id}/${free.dp_rank}`);
    expect(free.endpoint).toBe(free.worker_id === W1 ? W1_REG.endpoint : W2_REG.endpoint);
    expect(await activeRequests(client)).toEqual(idle);
  });

  it("books with select_and_reserve on every worker and DP rank in turn, and frees idempotently", async () => {
    const booked = [];
    for (const [i, id] of ["epp-b-1", undefined, "epp-b-3"].entries()) {
      const { response } = await client.selectAndReserve({
        model_name: MODEL,
        selection_id: id,
        token_ids: tokens(3000 + 100 * i, 32),
      });
      booked.push(response);
    }
    // Each booking loads its rank, so the next one goes to a rank still idle: all three are used.
    expect(booked.map((r) => `${r.worker_id}/${r.dp_rank}`).sort()).toEqual([...RANKS].sort());
    expect(booked[0]?.selection_id).toBe("epp-b-1");
    expect(booked[1]?.selection_id).toMatch(UUID_V4);
    expect(await activeRequests(client)).toEqual(Object.fromEntries(RANKS.map((rank) => [rank, 1n])));

    for (const r of booked) {
      const id = r.selection_id ?? "";
      await client.lifecycleIdempotent("prefill_complete", id);
      await client.lifecycleIdempotent("free", id);
      await client.lifecycleIdempotent("free", id);
      expect(client.calls.slice(-3).map((c) => c.status)).toEqual([200, 200, 404]);
    }
    expect(await activeRequests(client)).toEqual(idle);
  });
});

describe("Ray's select-then-reserve flow", () => {
  it("replays a cached selection once as a 201 on the selected rank, then ends it through the lifecycle", async () => {
    const prompt = tokens(5000, 48);
    const selected = await client.select({
      selection_id: "ray-1",
      model_name: MODEL,
      routing_group: "default",
      token_ids: prompt,
    });
    expect(selected.selection_id).toBe("ray-1");
    expect(await activeRequests(client)).toEqual(idle);

    const replay = { selection_id: "ray-1", model_name: MODEL, routing_group: "default" };
    const answer = await client.reserveRaw(replay);
    expect(answer.status).toBe(201);
    expect(reservationResponse(parseJson(answer.text), "reservation")).toEqual({
      selection_id: "ray-1",
      model_name: MODEL,
      routing_group: "default",
      worker_id: selected.worker_id,
      dp_rank: selected.dp_rank,
      endpoint: selected.endpoint,
    });
    const again = await client.reserveRaw(replay);
    expect(again.status).toBe(404);
    expect(again.text).toContain("no pending selection ray-1");
    const rank = `${selected.worker_id}/${selected.dp_rank}`;
    expect((await activeRequests(client))[rank]).toBe(1n);

    for (const step of [await client.prefillComplete("ray-1"), await client.free("ray-1")]) {
      expect(step.status).toBe(200);
      expect(statusOk(parseJson(step.text), "lifecycle")).toEqual({ status: "ok" });
    }
    expect(await activeRequests(client)).toEqual(idle);
    const gone = await client.free("ray-1");
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.text)).toEqual({ error: "reservation ray-1 not found" });
    expect((await client.prefillComplete("ray-1")).status).toBe(404);

    // The rank that served the prompt still caches it: the same prompt goes back there, credited.
    const cached = await client.select({ model_name: MODEL, routing_group: "default", token_ids: prompt });
    expect(`${cached.worker_id}/${cached.dp_rank}`).toBe(rank);
    expect(cached.overlap.gpu).toBe(48n);
    expect(cached.overlap.longest_matched).toBe(48n);
    expect(cached.effective_prefill_tokens).toBeLessThan(48n);
  });

  it("selects from the doc's precomputed hashes and replays that selection too", async () => {
    const selected = await client.select({
      selection_id: "ray-h",
      model_name: MODEL,
      routing_group: "default",
      block_hashes: [11n, 12n, 13n, 14n, 15n, 16n, 17n, 18n],
      sequence_hashes: [21n, 22n, 23n, 24n, 25n, 26n, 27n, 28n],
      isl_tokens: 128n,
    });
    expect(selected.effective_prefill_tokens).toBe(128n);
    const reserved = await client.reserve({
      selection_id: "ray-h",
      model_name: MODEL,
      routing_group: "default",
    });
    expect([reserved.worker_id, reserved.dp_rank]).toEqual([selected.worker_id, selected.dp_rank]);
    expect((await client.free("ray-h")).status).toBe(200);
  });

  it("books the explicit form on the named worker and rank, takes its prefill as given, and refuses the id twice", async () => {
    const explicit: ExplicitReservation = {
      selection_id: "ray-2",
      model_name: MODEL,
      routing_group: "default",
      worker_id: W1,
      dp_rank: 1n,
      sequence_hashes: [21n, 22n, 23n, 24n, 25n, 26n, 27n, 28n],
      isl_tokens: 128n,
      effective_prefill_tokens: 96n,
    };
    const answer = await client.reserveRaw(explicit);
    expect(answer.status).toBe(201);
    expect(answer.text).toContain(`"worker_id":${W1},`);
    expect(reservationResponse(parseJson(answer.text), "reservation")).toMatchObject({
      worker_id: W1,
      dp_rank: 1n,
      endpoint: W1_REG.endpoint,
    });
    const load = async () => (await loads(client)).get(`${W1}/1`);
    expect(await load()).toMatchObject({
      active_requests: 1n,
      potential_prefill_tokens: 96n,
      potential_decode_blocks: 8n,
    });

    const twice = await client.reserveRaw(explicit);
    expect(twice.status).toBe(409);
    expect(JSON.parse(twice.text)).toEqual({
      error: "selection ray-2 is already reserved or being reserved",
    });

    expect((await client.prefillComplete("ray-2")).status).toBe(200);
    expect(await load()).toMatchObject({ active_requests: 1n, potential_prefill_tokens: 0n });
    expect((await client.free("ray-2")).status).toBe(200);
    expect(await activeRequests(client)).toEqual(idle);
  });

  it("gets from select_and_reserve the booking facts that rebuild the booking through the explicit form", async () => {
    const { response, answer } = await client.selectAndReserve({
      model_name: MODEL,
      selection_id: "ray-4",
      token_ids: tokens(9000, 40),
    });
    expect(answer.status).toBe(200);
    const facts = bookingFacts(parseJson(answer.text), "select_and_reserve");
    expect(facts.selection_id).toBe("ray-4");
    expect(facts.sequence_hashes).toHaveLength(Math.floor(40 / BLOCK));
    expect(facts.isl_tokens).toBe(40n);
    const peerReplay: ExplicitReservation = {
      selection_id: facts.selection_id,
      model_name: MODEL,
      routing_group: "default",
      worker_id: response.worker_id,
      dp_rank: response.dp_rank,
      sequence_hashes: facts.sequence_hashes,
      isl_tokens: facts.isl_tokens,
      effective_prefill_tokens: response.effective_prefill_tokens,
      track_prefill_tokens: facts.track_prefill_tokens,
    };
    // On the one replica the id is booked already: the replay is the duplicate a peer must not make.
    expect((await client.reserveRaw(peerReplay)).status).toBe(409);
    expect((await client.free("ray-4")).status).toBe(200);

    const rebuilt = await client.reserve(peerReplay);
    expect([rebuilt.worker_id, rebuilt.dp_rank]).toEqual([response.worker_id, response.dp_rank]);
    const rank = `${response.worker_id}/${response.dp_rank}`;
    expect((await loads(client)).get(rank)).toMatchObject({
      active_requests: 1n,
      potential_decode_blocks: 2n,
    });
    expect((await client.free("ray-4")).status).toBe(200);
    expect(await activeRequests(client)).toEqual(idle);
  });
});

describe("the EPP's fleet as pods go away", () => {
  it("deletes a worker no longer desired, cannot select it any more, and stops routing once the catalog is empty", async () => {
    expect(await client.reconcile([W1_REG])).toEqual({ upserted: [], deleted: [W2], routable: true });
    const refused = await client
      .select({ model_name: MODEL, token_ids: tokens(12000, 16), allowed_worker_ids: [W2] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ClientError);
    expect((refused as ClientError).answer.status).toBe(503);
    const remaining = await client.select({ model_name: MODEL, token_ids: tokens(12000, 16) });
    expect(remaining.worker_id).toBe(W1);

    expect(await client.reconcile([])).toEqual({ upserted: [], deleted: [W1], routable: false });
    expect(client.calls.at(-1)).toMatchObject({ path: "/ready", status: 503 });
  });
});
