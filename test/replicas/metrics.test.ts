import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ReplicaEvent } from "../../durable-objects/core/replica/events";
import { trackerName } from "../../durable-objects/naming";
import { encodeBatch } from "../../durable-objects/replication/event-codec";
import { setClock } from "../workers/helpers";
import { type Parsed, parsePrometheus, sampleValue } from "../workers/prometheus-text";

type Replica = "east" | "west" | "apac";
const worker = (exports as unknown as { default: Fetcher }).default;

function post(replica: Replica, path: string, body: unknown): Promise<Response> {
  return worker.fetch(
    new Request(`http://x${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "x-slot-tracker-replica": replica, "content-type": "application/json" },
    }),
  );
}

/** One replica's metrics for `model`, chosen with `?replica=` as a Prometheus scrape config would. */
async function scrape(replica: Replica, model: string): Promise<Parsed> {
  const res = await worker.fetch(
    new Request(`http://x/metrics?${new URLSearchParams({ model_name: model, replica })}`),
  );
  expect(res.status).toBe(200);
  return parsePrometheus(await res.text());
}

/** Polls `check` over fresh scrapes until it holds, or fails with the last scrape's text. */
async function eventually(
  replica: Replica,
  model: string,
  check: (p: Parsed) => boolean,
  timeoutMs = 20_000,
) {
  const deadline = Date.now() + timeoutMs;
  let parsed = await scrape(replica, model);
  while (!check(parsed) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    parsed = await scrape(replica, model);
  }
  expect(check(parsed), JSON.stringify(parsed.samples.filter((s) => s.name.includes("replication")))).toBe(
    true,
  );
  return parsed;
}

const register = (model: string, workerId: number) => ({
  model_name: model,
  worker_id: workerId,
  block_size: 16,
  dp_start: 0,
  dp_size: 1,
});
const add = (model: string, id: string, hash: number) => ({
  model_name: model,
  request_id: id,
  worker_id: 1,
  dp_rank: 0,
  sequence_hashes: [hash],
  new_isl_tokens: 1,
});

describe("replication metrics", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("counts events sent at the origin and applied at the peers, and lag returns to zero", async () => {
    const m = `rm-${crypto.randomUUID()}`;
    expect((await post("east", "/register", register(m, 1))).status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await post("east", "/add", add(m, `r${i}`, i))).status).toBe(201);

    const east = await eventually(
      "east",
      m,
      (p) =>
        sampleValue(p, "slot_tracker_replication_events_sent_total", { peer: "west" }) === 4 &&
        sampleValue(p, "slot_tracker_replication_peer_lag_events", { peer: "west" }) === 0,
    );
    expect(sampleValue(east, "slot_tracker_replication_peer_lag_seconds", { peer: "west" })).toBe(0);
    expect(sampleValue(east, "slot_tracker_replication_peer_state", { peer: "west", state: "ok" })).toBe(1);
    expect(sampleValue(east, "slot_tracker_scrape_trackers", { replica: "east" })).toBe(1);
    for (const peer of ["west", "apac"] as const) {
      const parsed = await eventually(
        peer,
        m,
        (p) => sampleValue(p, "slot_tracker_replication_events_applied_total", { origin: "east" }) === 4,
      );
      expect(sampleValue(parsed, "slot_tracker_live_requests", { replica: peer, model: m })).toBe(3);
      expect(
        sampleValue(parsed, "slot_tracker_replication_events_deduplicated_total", { origin: "east" }),
      ).toBe(0);
    }
  });

  it("counts a retried batch's events as deduplicated, not applied twice", async () => {
    const m = `rm-${crypto.randomUUID()}`;
    const stub = env.TRACKER.getByName(trackerName({ replica: "west", model: m, tenant: "default" }));
    const event: ReplicaEvent = {
      ts: Date.now() * 1024,
      origin: "apac",
      type: "register",
      workerId: 5n,
      blockSize: 16,
      dpStart: 0,
      dpSize: 1,
    };
    const batch = encodeBatch({
      origin: "apac",
      incarnation: "metrics-test",
      kind: "stream",
      firstSeq: 1,
      upTo: 0,
      final: false,
      events: [event],
    });
    expect(await stub.replicate(batch)).toEqual({ status: "ok", applied: 1 });
    expect(await stub.replicate(batch)).toEqual({ status: "ok", applied: 1 });
    const parsed = await scrape("west", m);
    expect(sampleValue(parsed, "slot_tracker_replication_events_applied_total", { origin: "apac" })).toBe(1);
    expect(
      sampleValue(parsed, "slot_tracker_replication_events_deduplicated_total", { origin: "apac" }),
    ).toBe(1);
    expect(sampleValue(parsed, "slot_tracker_registered_workers", { model: m })).toBe(1);
  });

  it("observes each stream event's delay from acceptance at its origin to application, once, and no snapshot's", async () => {
    const m = `rm-${crypto.randomUUID()}`;
    const stub = env.TRACKER.getByName(trackerName({ replica: "west", model: m, tenant: "default" }));
    // The clock stands still, so that each delay is exactly what the events were stamped with, however
    // long the calls take.
    const now = Date.now();
    setClock(now);
    const registration = (workerId: bigint, acceptedAtMs: number): ReplicaEvent => ({
      ts: acceptedAtMs * 1024,
      origin: "apac",
      type: "register",
      workerId,
      blockSize: 16,
      dpStart: 0,
      dpSize: 1,
    });
    const header = { origin: "apac", incarnation: "delay-test", upTo: 0, final: false } as const;
    // Accepted 3 s ago: in the (2 s, 5 s] bucket. A key ahead of this replica's clock counts as 0.
    const stream = encodeBatch({
      ...header,
      kind: "stream",
      firstSeq: 1,
      events: [registration(5n, now - 3_000), registration(6n, now + 60_000)],
    });
    expect(await stub.replicate(stream)).toEqual({ status: "ok", applied: 2 });
    expect(await stub.replicate(stream)).toEqual({ status: "ok", applied: 2 });
    const snapshot = encodeBatch({
      ...header,
      kind: "snapshot",
      firstSeq: 0,
      events: [registration(7n, now - 3_600_000)],
    });
    expect(await stub.replicate(snapshot)).toEqual({ status: "ok", applied: 2 });

    const parsed = await scrape("west", m);
    const delay = "slot_tracker_replication_apply_delay_seconds";
    expect(parsed.types.get(delay)).toBe("histogram");
    const bucket = (le: string) => sampleValue(parsed, `${delay}_bucket`, { origin: "apac", le });
    expect([bucket("0.001"), bucket("2"), bucket("5"), bucket("60"), bucket("+Inf")]).toEqual([
      1, 1, 2, 2, 2,
    ]);
    expect(sampleValue(parsed, `${delay}_count`, { origin: "apac" })).toBe(2);
    const sum = sampleValue(parsed, `${delay}_sum`, { origin: "apac" })!;
    expect(sum).toBeGreaterThanOrEqual(3);
    expect(sum).toBeLessThanOrEqual(5);
    expect(sampleValue(parsed, "slot_tracker_replication_events_applied_total", { origin: "apac" })).toBe(3);
  });

  it("counts a snapshot resync of a peer that fell past the outbox cap", async () => {
    const m = `rm-${crypto.randomUUID()}`;
    expect((await post("east", "/register", register(m, 1))).status).toBe(201);
    await eventually("west", m, (p) => sampleValue(p, "slot_tracker_registered_workers", { model: m }) === 1);
    // West refuses every batch until its next reset, as an unreachable peer would.
    await runInDurableObject(
      env.TRACKER.getByName(trackerName({ replica: "west", model: m, tenant: "default" })),
      (instance) => {
        const sync = (instance as unknown as { sync: { receive: () => never } }).sync;
        sync.receive = () => {
          throw new Error("unreachable");
        };
      },
    );
    // REPLICA_OUTBOX_CAP is 40 in this project.
    for (let i = 0; i < 50; i++) expect((await post("east", "/add", add(m, `u${i}`, i))).status).toBe(201);
    await eventually(
      "east",
      m,
      (p) => sampleValue(p, "slot_tracker_replication_peer_state", { peer: "west", state: "resync" }) === 1,
    );
    // Every object restarts (west healthy again); east's counters restart with it and count the resync it finishes.
    await abortAllDurableObjects();
    const east = await eventually(
      "east",
      m,
      (p) =>
        sampleValue(p, "slot_tracker_replication_resyncs_total", { peer: "west" }) === 1 &&
        sampleValue(p, "slot_tracker_replication_peer_state", { peer: "west", state: "ok" }) === 1,
      40_000,
    );
    expect(sampleValue(east, "slot_tracker_replication_resyncs_total", { peer: "apac" })).toBe(0);
    await eventually("west", m, (p) => sampleValue(p, "slot_tracker_live_requests", { model: m }) === 50);
  });
});
