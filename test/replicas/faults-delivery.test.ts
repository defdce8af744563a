/**
 * Replication delivery under faults with three replicas: a flush in flight when every object is reset
 * is delivered exactly once, an alarm handler run a second time changes nothing, and a peer unreachable
 * for a long time, with writes everywhere meanwhile, is brought back in line.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectAgreement, type Tracked } from "./acked-changes";
import {
  blockReceive,
  converged,
  liveBook,
  loads,
  peers,
  post,
  registered,
  type Replica,
  REPLICAS,
  sleep,
  stubOf,
  unique,
  waitUntil,
} from "./fault-helpers";

describe("faults", () => {
  it("delivers a flush exactly once when every object is reset while it is in flight", async () => {
    const model = unique();
    await registered(model);
    const tracked: Tracked[] = [];
    /** Five adds in one call, so east ships them to each peer as one batch. */
    const addFive = async (prefix: string) => {
      const ops = [0, 1, 2, 3, 4].map((i) => ({
        op: "add",
        request_id: `${prefix}-${i}`,
        worker_id: 1,
        dp_rank: i % 4,
        sequence_hashes: [i, 7],
        new_isl_tokens: 3,
      }));
      const answer = await post("east", "/batch", { model_name: model, ops });
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text).results.map((r: { status: number }) => r.status)).toEqual([
        201, 201, 201, 201, 201,
      ]);
      for (const [i, op] of ops.entries()) {
        tracked.push({
          id: op.request_id,
          home: "east",
          rank: i % 4,
          tokens: 3,
          hashes: [i, 7],
          steps: ["add"],
          outcomes: { add: "acked" },
        });
      }
    };
    const resetAndAgree = async () => {
      await abortAllDurableObjects();
      await expectAgreement(model, tracked);
      // Not immediate: locally the interrupted alarm keeps the object's alarm slot until its peer
      // call times out (10 s), and only then is the flush retried (about 12 s in all).
      await waitUntil(
        async () => (await peers("east", model)).peers.every((p) => p.queued_events === 0),
        60_000,
      );
    };

    // 1. West applies east's batch and records its stream position, then stalls before answering:
    // east's alarm is still waiting for the acknowledgement when everything is reset. East resends
    // after the reset and west, which has the batch already, applies nothing twice.
    await runInDurableObject(stubOf("west", model), (instance) => {
      const object = instance as unknown as { finish: (value: unknown, op?: string) => Promise<unknown> };
      const finish = object.finish.bind(object);
      object.finish = async (value, op) => {
        if (op === undefined && value && typeof value === "object" && "applied" in value) await sleep(30_000);
        return finish(value, op);
      };
    });
    await addFive("applied");
    await waitUntil(async () => (await liveBook("west", model)).length === 5);
    await resetAndAgree();

    // 2. East's call to apac never answers (as a hung connection would): reset mid-flush, before delivery.
    await runInDurableObject(stubOf("east", model), (instance) => {
      const sync = (
        instance as unknown as { sync: { options: { stubOf: unknown }; stubs: Map<string, unknown> } }
      ).sync;
      const real = sync.options.stubOf as (peer: string) => unknown;
      sync.stubs.clear();
      sync.options.stubOf = (peer: string) =>
        peer === "apac" ? { replicate: () => new Promise(() => {}) } : real(peer);
    });
    await addFive("hung");
    await waitUntil(async () => (await liveBook("west", model)).length === 10);
    expect((await liveBook("apac", model)).length).toBe(5);
    await resetAndAgree();
  }, 240_000);

  it("changes nothing when the alarm handler runs a second time in a row", async () => {
    const model = unique();
    await registered(model);
    await blockReceive(["west", "apac"], model);
    for (let i = 0; i < 6; i++) {
      const body = {
        model_name: model,
        request_id: `a${i}`,
        worker_id: 1,
        dp_rank: i % 4,
        sequence_hashes: [i],
        new_isl_tokens: 2,
      };
      expect((await post("east", "/add", body)).status).toBe(201);
    }
    expect((await peers("east", model)).peers.map((p) => p.queued_events)).toEqual([6, 6]);
    // The reset unblocks the peers and leaves east's outbox due at once on restart: its own alarm
    // ships it. That run did the work; every further run of the handler must change nothing.
    await abortAllDurableObjects();
    const east = stubOf("east", model);
    await waitUntil(async () => (await peers("east", model)).peers.every((p) => p.queued_events === 0));
    const done = await Promise.all(REPLICAS.map((r) => storageDump(r, model)));
    // East stored each add as a row; a peer stores a received batch as one journal row.
    expect(done.map((d) => [d.dump.requests?.length, d.dump.journal?.length])).toEqual([
      [6, 0],
      [0, 1],
      [0, 1],
    ]);
    const runAlarm = () =>
      runInDurableObject(east, (instance) => (instance as unknown as { alarm(): Promise<void> }).alarm());
    await runAlarm();
    expect(await Promise.all(REPLICAS.map((r) => storageDump(r, model)))).toEqual(done);
    await runAlarm();
    expect(await Promise.all(REPLICAS.map((r) => storageDump(r, model)))).toEqual(done);
    await converged((r) => loads(r, model));
  });

  it("brings a peer that was unreachable for a long time back in line, with writes everywhere meanwhile", async () => {
    const model = unique();
    await registered(model);
    const tracked: Tracked[] = [];
    const restore = await blockReceive(["west"], model);
    const started = Date.now();
    let n = 0;
    // Long enough for several failed sends and backoff growth, with more events than the outbox cap (40).
    while (Date.now() - started < 6_000 || n < 60) {
      const home = REPLICAS[n % 3]!;
      const id = `d${n}`;
      const body = {
        model_name: model,
        request_id: id,
        worker_id: 1,
        dp_rank: n % 4,
        sequence_hashes: [n % 5, n],
        new_isl_tokens: 1 + (n % 7),
      };
      expect((await post(home, "/add", body)).status).toBe(201);
      const t: Tracked = {
        id,
        home,
        rank: n % 4,
        tokens: 1 + (n % 7),
        hashes: [n % 5, n],
        steps: ["add"],
        outcomes: { add: "acked" },
      };
      if (n % 3 === 0) {
        expect((await post(home, "/prefill_complete", { model_name: model, request_id: id })).status).toBe(
          200,
        );
        t.steps.push("prefill_complete");
        t.outcomes.prefill_complete = "acked";
      }
      if (n % 4 === 0 && n > 0) {
        const earlier = tracked[n - 1]!;
        expect(
          (await post(earlier.home, "/free", { model_name: model, request_id: earlier.id })).status,
        ).toBe(200);
        earlier.steps.push("free");
        earlier.outcomes.free = "acked";
      }
      tracked.push(t);
      n++;
      await sleep(40);
    }
    const east = (await peers("east", model)).peers.find((p) => p.peer === "west")!;
    expect(east.state).not.toBe("ok");
    expect(east.queued_events).toBeGreaterThan(0);
    await restore();
    await expectAgreement(model, tracked);
    // Every sender finishes catching west up (streams acknowledged, snapshots completed).
    const caughtUp = async () =>
      (await Promise.all(REPLICAS.map((r) => peers(r, model)))).every((status) =>
        status.peers.every((p) => p.state === "ok" && p.queued_events === 0),
      );
    await waitUntil(caughtUp, 40_000);
  });
});

/** Every table of a replica's object and its alarm, as comparable values. */
function storageDump(replica: Replica, model: string) {
  return runInDurableObject(stubOf(replica, model), async (_instance, state) => {
    const tables = state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name",
      )
      .toArray()
      .map((t) => t.name);
    const dump: Record<string, unknown[]> = {};
    for (const table of tables) {
      dump[table] = state.storage.sql
        .exec(`SELECT * FROM "${table}"`)
        .toArray()
        .map((row) =>
          Object.fromEntries(
            Object.entries(row).map(([k, v]) => [
              k,
              v instanceof ArrayBuffer ? [...new Uint8Array(v)].join(",") : v,
            ]),
          ),
        )
        .map((row) => JSON.stringify(row))
        .sort();
    }
    return { dump, alarm: await state.storage.getAlarm() };
  });
}
