/**
 * Resets with three replicas: objects aborted at random points of a stream of operations, right after
 * a write (before or after it reached disk) and all at once with replication pending. After each, no
 * acknowledged change is lost, none is applied twice, and the replicas agree request by request.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectAgreement, outcomeOf, type Tracked } from "./acked-changes";
import {
  blockReceive,
  converged,
  liveBook,
  peers,
  post,
  registered,
  type Replica,
  REPLICAS,
  seeded,
  sleep,
  stubOf,
  unique,
} from "./fault-helpers";

describe("faults", () => {
  it("loses no acknowledged change and applies none twice when every object is aborted at random points", async () => {
    // Fixed, so that every run makes the same waves and rolls; change it to explore other runs.
    const seed = 20261201;
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
  });

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
  });

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
  });

  it("ships a /batch's events, stored as one outbox row, from SQLite after a reset", async () => {
    const model = unique();
    await registered(model);
    await blockReceive(["west", "apac"], model);
    const ops = Array.from({ length: 30 }, (_, i) => ({
      op: "add",
      request_id: `g${i}`,
      worker_id: 1,
      dp_rank: i % 4,
      sequence_hashes: [i, 1000 + i],
      new_isl_tokens: 2,
    }));
    expect((await post("east", "/batch", { model_name: model, ops })).status).toBe(200);
    const grouped = () =>
      runInDurableObject(stubOf("east", model), (_instance, state) =>
        state.storage.sql.exec("SELECT count FROM outbox WHERE count > 1").toArray(),
      );
    expect(await grouped()).toEqual([{ count: 30 }]);
    // The reset empties east's memory of its outbox and unblocks the peers: the 30 events are read
    // back from their row and applied everywhere.
    await abortAllDurableObjects();
    const books = await converged(async (r) => (await liveBook(r, model)).map((row) => row.id));
    expect(books.length).toBe(30);
  });

  it("restores the prefill timelines kept by /batch calls and single calls alike after a reset", async () => {
    const model = unique();
    await registered(model);
    const add = (id: string, rank: number) => ({
      op: "add",
      request_id: id,
      worker_id: 1,
      dp_rank: rank,
      sequence_hashes: [rank, 9],
      new_isl_tokens: 40,
      expected_prefill_duration_ms: 60_000,
    });
    const ops = [
      ...[0, 1, 2, 3, 4, 5].map((i) => add(`t${i}`, i % 2)),
      { op: "prefill_complete", request_id: "t0" },
      { op: "free", request_id: "t0" },
      { op: "free", request_id: "t1" },
      { op: "prefill_complete", request_id: "t2" },
    ];
    expect((await post("east", "/batch", { model_name: model, ops })).status).toBe(200);
    expect((await post("east", "/free", { model_name: model, request_id: "t3" })).status).toBe(200);
    expect((await post("east", "/batch", { model_name: model, ops: [add("t6", 3)] })).status).toBe(200);
    await converged(async (r) => (await liveBook(r, model)).map((row) => row.id));
    // East kept the batches' changes as group rows; west kept those of the batches it received.
    for (const r of ["east", "west"] as const) {
      const groups = await runInDurableObject(
        stubOf(r, model),
        (_instance, state) => state.storage.sql.exec("SELECT count(*) AS n FROM timeline_groups").one().n,
      );
      expect(groups, r).toBeGreaterThan(0);
    }
    const timelines = (r: Replica) =>
      runInDurableObject(stubOf(r, model), (instance) => {
        const { departures } = (instance as unknown as { tracker: { departures: unknown } }).tracker;
        const kept = (departures as { timelines: Map<string, { ts: number; type: string }[]> }).timelines;
        return [...kept]
          .map(([id, events]) => `${id}: ${events.map((e) => `${e.type}@${e.ts}`).join(" ")}`)
          .sort();
      });
    const before = await Promise.all(REPLICAS.map(timelines));
    expect(before[0]!.length).toBe(7);
    await abortAllDurableObjects();
    expect(await Promise.all(REPLICAS.map(timelines))).toEqual(before);
  });
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
