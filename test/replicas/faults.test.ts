/**
 * Faults with three replicas: objects aborted in the middle of a stream of operations, between a
 * write and its answer, during an alarm and during a replication flush; an alarm run twice; a peer
 * unreachable for a long time; every object reset at once with replication pending. After each, no
 * acknowledged change is lost, none is applied twice, and the replicas agree request by request.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  converged,
  internals,
  type LiveRow,
  liveBook,
  loads,
  peers,
  post,
  REPLICAS,
  type Replica,
  seeded,
  sleep,
  stubOf,
  workers,
} from "./fault-helpers";

/** What the client learnt of one call: applied, refused (4xx), or unknown (it failed: maybe applied). */
type Outcome = "acked" | "refused" | "unknown";

interface Tracked {
  id: string;
  home: Replica;
  rank: number;
  tokens: number;
  hashes: number[];
  steps: ("add" | "prefill_complete" | "free")[];
  outcomes: Partial<Record<"add" | "prefill_complete" | "free", Outcome>>;
}

const outcomeOf = (status: number): Outcome =>
  status >= 200 && status < 300 ? "acked" : status >= 400 && status < 500 ? "refused" : "unknown";

let counter = 0;
const unique = () => `faults-${++counter}-${crypto.randomUUID()}`;

async function registered(model: string, replica: Replica = "east") {
  const answer = await post(replica, "/register", {
    worker_id: 1,
    model_name: model,
    block_size: 16,
    dp_start: 0,
    dp_size: 4,
  });
  expect(answer.status).toBe(201);
  await converged((r) => workers(r, model));
}

/**
 * Checks each replica's live book against what the client was told: an acknowledged add is live
 * unless a free was acknowledged, an acknowledged free leaves nothing, an acknowledged completion
 * leaves no pending prefill, and a request that is live is exactly what its add said, once. Calls
 * that failed may have landed or not, but the replicas must agree on which (checked by the caller).
 */
function expectAcknowledged(book: LiveRow[], tracked: Tracked[]): void {
  const live = new Map(book.map((row) => [row.id, row]));
  expect(live.size).toBe(book.length);
  for (const t of tracked) {
    const row = live.get(t.id);
    const { add, prefill_complete: prefill, free } = t.outcomes;
    const what = `${t.id} ${JSON.stringify(t.outcomes)}`;
    expect(add, what).not.toBe("refused");
    if (free === "acked") expect(row, what).toBeUndefined();
    else if (add === "acked" && free === undefined) expect(row, what).toBeDefined();
    if (prefill === "acked" && free !== "acked")
      expect(row ?? "absent", `${what}: acked completion proves the add landed`).not.toBe("absent");
    if (!row) continue;
    expect(row, what).toEqual({
      id: t.id,
      workerId: "1",
      rank: t.rank,
      tokens: t.tokens,
      prefillPending: prefill === "acked" ? false : prefill === undefined ? t.tokens > 0 : row.prefillPending,
      hashes: t.hashes.map(String),
    });
  }
  const known = new Set(tracked.map((t) => t.id));
  for (const id of live.keys()) expect(known.has(id), `unexpected live request ${id}`).toBe(true);
}

/** The loads every replica reports, recomputed from its live book: nothing counted twice or missed. */
function loadsOfBook(model: string, book: LiveRow[]): object[] {
  return [0, 1, 2, 3].map((rank) => {
    const rows = book.filter((r) => r.rank === rank);
    return {
      model_name: model,
      tenant_id: "default",
      worker_id: 1,
      dp_rank: rank,
      active_prefill_tokens: rows.reduce((sum, r) => sum + (r.prefillPending ? r.tokens : 0), 0),
      active_decode_blocks: new Set(rows.flatMap((r) => r.hashes)).size,
    };
  });
}

async function expectAgreement(model: string, tracked: Tracked[]): Promise<LiveRow[]> {
  const loadsText = await converged((r) => loads(r, model), 40_000);
  const book = await converged((r) => liveBook(r, model), 10_000);
  expectAcknowledged(book, tracked);
  expect(JSON.parse(loadsText)).toEqual(loadsOfBook(model, book));
  return book;
}

describe("faults", () => {
  it("loses no acknowledged change and applies none twice when every object is aborted at random points", async () => {
    const seed = Date.now() % 1_000_000;
    const random = seeded(seed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const model = unique();
    await registered(model);
    const tracked: Tracked[] = Array.from({ length: 48 }, (_, i) => {
      const steps: Tracked["steps"] = ["add"];
      if (random() < 0.5) steps.push("prefill_complete");
      if (random() < 0.5) steps.push("free");
      return {
        id: `q${i}`,
        home: pick(REPLICAS),
        rank: i % 4,
        tokens: 1 + Math.floor(random() * 50),
        hashes: [i % 3, 100 + i],
        steps,
        outcomes: {},
      };
    });
    const statuses: number[] = [];
    let aborts = 0;
    const pending = () => tracked.filter((t) => Object.keys(t.outcomes).length < t.steps.length);
    while (pending().length > 0) {
      const wave = pending()
        .sort(() => random() - 0.5)
        .slice(0, 8);
      const calls = wave.map(async (t) => {
        const step = t.steps[Object.keys(t.outcomes).length]!;
        const body =
          step === "add"
            ? {
                model_name: model,
                request_id: t.id,
                worker_id: 1,
                dp_rank: t.rank,
                sequence_hashes: t.hashes,
                new_isl_tokens: t.tokens,
              }
            : { model_name: model, request_id: t.id };
        const answer = await post(t.home, `/${step}`, body);
        statuses.push(answer.status);
        t.outcomes[step] = outcomeOf(answer.status);
      });
      const roll = random();
      if (roll < 0.3) {
        // In the middle of the wave: some calls have written, some have answered, some neither.
        await sleep(Math.floor(random() * 15));
        aborts++;
        await abortAllDurableObjects();
      }
      await Promise.all(calls);
      if (roll > 0.85) {
        aborts++;
        await abortAllDurableObjects();
      }
    }
    console.log(
      `seed ${seed}: ${statuses.length} calls, ${aborts} resets, statuses ${JSON.stringify(
        Object.fromEntries([...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length])),
      )}`,
    );
    expect(aborts).toBeGreaterThan(0);
    for (const s of statuses) expect([0, 200, 201, 404, 500, 503]).toContain(s);
    const book = await expectAgreement(model, tracked);
    // A restart reads back exactly the book that was in memory.
    await abortAllDurableObjects();
    expect(await converged((r) => liveBook(r, model))).toEqual(book);
  }, 120_000);

  it("keeps a change whose answer was lost to a reset right after its write exactly once", async () => {
    const model = unique();
    await registered(model);
    const add = (id: string) => ({
      model_name: model,
      request_id: id,
      worker_id: 1,
      dp_rank: 2,
      sequence_hashes: [5, 6],
      new_isl_tokens: 9,
    });
    const tracked = (id: string, outcomes: Tracked["outcomes"]): Tracked => ({
      id,
      home: "east",
      rank: 2,
      tokens: 9,
      hashes: [5, 6],
      steps: ["add", "free"],
      outcomes,
    });

    // Reset before the write reached disk: the add is gone with its outbox entry, so a retry books it.
    await resetAfterNext("east", model, "add", false);
    expect((await post("east", "/add", add("unsynced"))).status).toBeGreaterThanOrEqual(500);
    expect((await post("east", "/add", add("unsynced"))).status).toBe(201);

    // Reset once the write is on disk: the add stays (and is replicated), so a retry is refused as a duplicate.
    await resetAfterNext("east", model, "add", true);
    expect((await post("east", "/add", add("synced"))).status).toBeGreaterThanOrEqual(500);
    expect((await post("east", "/add", add("synced"))).status).toBe(409);

    await post("east", "/add", add("freed"));
    await resetAfterNext("east", model, "free", true);
    expect(
      (await post("east", "/free", { model_name: model, request_id: "freed" })).status,
    ).toBeGreaterThanOrEqual(500);
    expect((await post("east", "/free", { model_name: model, request_id: "freed" })).status).toBe(200);

    const book = await expectAgreement(model, [
      tracked("unsynced", { add: "acked" }),
      tracked("synced", { add: "acked" }),
      tracked("freed", { add: "acked", free: "acked" }),
    ]);
    expect(book.map((r) => r.id)).toEqual(["synced", "unsynced"]);
  }, 60_000);

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
      const started = Date.now();
      await expectAgreement(model, tracked);
      await waitUntil(async () => (await peers("east", model)).peers.every((p) => p.queued_events === 0));
      // Bounded, though not immediate: locally the interrupted alarm keeps the object's alarm slot
      // until its peer call times out (10 s), and only then is the flush retried (about 12 s in all).
      expect(Date.now() - started).toBeLessThan(25_000);
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
  }, 90_000);

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
    expect(done.map((d) => d.dump.requests?.length)).toEqual([6, 6, 6]);
    const runAlarm = () =>
      runInDurableObject(east, (instance) => (instance as unknown as { alarm(): Promise<void> }).alarm());
    await runAlarm();
    expect(await Promise.all(REPLICAS.map((r) => storageDump(r, model)))).toEqual(done);
    await runAlarm();
    expect(await Promise.all(REPLICAS.map((r) => storageDump(r, model)))).toEqual(done);
    await converged((r) => loads(r, model));
  }, 60_000);

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
  }, 120_000);

  it("keeps state and pending replication through a reset of every object at once", async () => {
    const model = unique();
    await registered(model);
    await blockReceive([...REPLICAS], model);
    const tracked: Tracked[] = [];
    for (let i = 0; i < 12; i++) {
      const home = REPLICAS[i % 3]!;
      const body = {
        model_name: model,
        request_id: `r${i}`,
        worker_id: 1,
        dp_rank: i % 4,
        sequence_hashes: [i],
        new_isl_tokens: 4,
      };
      expect((await post(home, "/add", body)).status).toBe(201);
      tracked.push({
        id: `r${i}`,
        home,
        rank: i % 4,
        tokens: 4,
        hashes: [i],
        steps: ["add"],
        outcomes: { add: "acked" },
      });
    }
    expect((await post("west", "/free", { model_name: model, request_id: "r1" })).status).toBe(200);
    tracked[1]!.steps.push("free");
    tracked[1]!.outcomes.free = "acked";
    expect((await post("apac", "/prefill_complete", { model_name: model, request_id: "r2" })).status).toBe(
      200,
    );
    tracked[2]!.steps.push("prefill_complete");
    tracked[2]!.outcomes.prefill_complete = "acked";
    for (const r of REPLICAS) {
      for (const p of (await peers(r, model)).peers)
        expect(p.queued_events, `${r} → ${p.peer}`).toBeGreaterThan(0);
      expect((await liveBook(r, model)).length, r).toBeLessThan(12);
    }
    await abortAllDurableObjects();
    await expectAgreement(model, tracked);
  }, 60_000);
});

/**
 * Makes `replica`'s object reset itself right after its next `op` wrote its change, before answering
 * (`synced`: once the write is on disk). The reset drops the patch with the rest of the instance.
 */
function resetAfterNext(replica: Replica, model: string, op: string, synced: boolean) {
  return runInDurableObject(stubOf(replica, model), (instance, state) => {
    const object = instance as unknown as { finish: (value: unknown, op?: string) => Promise<unknown> };
    const finish = object.finish.bind(object);
    object.finish = async (value, called) => {
      const answer = await finish(value, called);
      if (called === op) {
        if (synced) await state.storage.sync();
        state.abort(`reset after the ${op} was written`);
      }
      return answer;
    };
  });
}

/** Makes `replicas` refuse every batch from their peers, as if unreachable; returns the undo. */
async function blockReceive(replicas: Replica[], model: string): Promise<() => Promise<void>> {
  const originals = new Map<Replica, (...args: unknown[]) => unknown>();
  for (const r of replicas) {
    await runInDurableObject(stubOf(r, model), (instance) => {
      const sync = internals(instance).sync!;
      originals.set(r, sync.receive);
      sync.receive = () => {
        throw new Error(`${r} is unreachable`);
      };
    });
  }
  return async () => {
    for (const r of replicas) {
      await runInDurableObject(stubOf(r, model), (instance) => {
        internals(instance).sync!.receive = originals.get(r)!;
      });
    }
  };
}

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

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(25);
  }
}
