/**
 * The relay end to end on real parts: an engine's publisher and replay socket on real ZMQ
 * (`zmq-engine.ts`), the relay as its own process (`relay/bin.mjs`), and the Worker as it deploys,
 * in Miniflare (`built-worker.ts`). Events reach the index and make `/selection/select_and_reserve` choose the rank
 * that holds the prefix; a batch the relay's socket lost is replayed; a relay killed and restarted
 * continues its epoch and loses nothing; an engine that restarts starts a new epoch. Every wait is a
 * poll of what the tracker or the relay reports, with a deadline.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltWorker, startBuiltWorker } from "./built-worker";
import { ZmqEngine } from "./zmq-engine";

const root = join(import.meta.dirname, "../..");
const BLOCK = 4;
/** A worker id above 2^53: the relay and the tracker must keep it exact. */
const WORKER = 18_446_744_073_709_551_557n;
const DEADLINE_MS = 60_000;

let worker: BuiltWorker;
let base: URL;
const engines: ZmqEngine[] = [];
const relays: Relay[] = [];

beforeAll(async () => {
  worker = await startBuiltWorker();
  base = worker.url;
});

afterAll(async () => {
  for (const relay of relays) await relay.kill();
  for (const engine of engines) engine.close();
  await worker?.dispose();
});

/** Tokens of blocks `blocks` (block b is tokens 4b − 3 ..= 4b). */
function tokens(blocks: number[]): number[] {
  return blocks.flatMap((b) => Array.from({ length: BLOCK }, (_, i) => BLOCK * (b - 1) + i + 1));
}

const engineHash = (b: number) => 0x5bd1_e995_0000_0000n + BigInt(b);

/** vLLM's array-form `BlockStored` (v0.11 layout), a run of blocks under `parent`. */
function stored(blocks: number[], parent: number | null): unknown[] {
  const parentHash = parent === null ? null : engineHash(parent);
  return ["BlockStored", blocks.map(engineHash), parentHash, tokens(blocks), BLOCK, null, "GPU", null];
}

async function call(method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const res = await fetch(new URL(path, base), {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** A partition of its own, with `WORKER` schedulable on ranks 0 and 1. */
async function partition(name: string): Promise<string> {
  const model = `${name}-${crypto.randomUUID()}`;
  const record = `{"worker_id":${WORKER},"model_name":"${model}","routing_group":"default","endpoint":"http://w","block_size":${BLOCK},"data_parallel_start_rank":0,"data_parallel_size":2,"taints":[]}`;
  const posted = await call("POST", "/selection/workers", record);
  expect(posted.status, posted.text).toBe(201);
  return model;
}

/** The tracker's stream of (WORKER, rank): its epoch and the number it expects next. */
async function stream(model: string, dpRank: number): Promise<{ epoch: string; next_seq: number } | null> {
  const listed = await call("GET", `/kv_events?model_name=${model}`);
  expect(listed.status, listed.text).toBe(200);
  // The worker id is above 2^53: match it in the text, where it is exact.
  const streams = JSON.parse(listed.text.replaceAll(/"worker_id":(\d+)/g, '"worker_id":"$1"')) as {
    worker_id: string;
    dp_rank: number;
    epoch: string;
    next_seq: number;
  }[];
  return streams.find((s) => s.worker_id === String(WORKER) && s.dp_rank === dpRank) ?? null;
}

/** Polls until the tracker expects `nextSeq` from the rank, and returns the stream. */
async function reaches(model: string, dpRank: number, nextSeq: number) {
  return poll(`rank ${dpRank} of ${model} at next_seq ${nextSeq}`, async () => {
    const s = await stream(model, dpRank);
    return s !== null && s.next_seq >= nextSeq ? s : null;
  });
}

async function poll<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${DEADLINE_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Device blocks each rank of WORKER holds of the prompt of `blocks`, from `/selection/overlap_scores`. */
async function deviceBlocks(model: string, blocks: number[]): Promise<Record<number, number>> {
  const scores = await call(
    "POST",
    "/selection/overlap_scores",
    JSON.stringify({ model_name: model, routing_group: "default", token_ids: tokens(blocks) }),
  );
  expect(scores.status, scores.text).toBe(200);
  const parsed = JSON.parse(scores.text.replaceAll(/"worker_id":(\d+)/g, '"worker_id":"$1"')) as {
    workers: { worker_id: string; dp_rank: number; device_blocks: number }[];
  };
  return Object.fromEntries(parsed.workers.map((w) => [w.dp_rank, w.device_blocks]));
}

/** The relay as its own process, its JSON log lines kept, its status read from `/status`. */
class Relay {
  readonly lines: Record<string, unknown>[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private statusUrl: Promise<string>;

  constructor(model: string, engine: ZmqEngine) {
    this.child = spawn(
      process.execPath,
      [
        join(root, "relay/bin.mjs"),
        ...["--engine", engine.liveEndpoint, "--replay", engine.replayEndpoint],
        ...["--tracker", base.href, "--model", model, "--worker-id", String(WORKER)],
        // A replay unanswered this long would start a new epoch: far beyond a loaded machine's delays.
        ...["--dp-rank", "1", "--status", "127.0.0.1:0", "--replay-timeout-ms", "30000"],
      ],
      { cwd: root, stdio: ["ignore", "ignore", "pipe"] },
    );
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    let started: (url: string) => void;
    this.statusUrl = new Promise((resolve) => {
      started = resolve;
    });
    let rest = "";
    this.child.stderr!.on("data", (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop()!;
      for (const part of parts) {
        const line = JSON.parse(part) as Record<string, unknown>;
        this.lines.push(line);
        const status = line.status as { address: string; port: number } | undefined;
        if (line.msg === "relay started" && status) started(`http://${status.address}:${status.port}/status`);
      }
    });
    relays.push(this);
  }

  async status(): Promise<Record<string, number | string | null>> {
    const res = await fetch(await this.statusUrl);
    return ((await res.json()) as { ranks: Record<string, number | string | null>[] }).ranks[0]!;
  }

  /** Problems it logged: every line at warn or error. */
  problems(): Record<string, unknown>[] {
    return this.lines.filter((l) => l.level !== "info");
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }

  /** SIGTERM: it posts what it holds and exits 0. */
  async stop(): Promise<number | null> {
    this.child.kill("SIGTERM");
    return this.exited;
  }
}

async function engineOn(dpRank: number, options?: ConstructorParameters<typeof ZmqEngine>[1]) {
  const engine = await new ZmqEngine(dpRank, options).start();
  engines.push(engine);
  return engine;
}

describe("the relay between an engine's ZMQ sockets and the tracker", () => {
  it("brings a vLLM event stream into the index, replaying a lost batch, so the holder of the prefix is chosen", async () => {
    const model = await partition("relay");
    const engine = await engineOn(1, { topic: "kv-events" });
    // Published before the relay runs: only the replay has them, and the relay starts from it.
    await engine.publish([stored([1, 2], null)]);
    const relay = new Relay(model, engine);
    await engine.subscribed();
    await reaches(model, 1, 1); // its start-up replay is done
    await engine.publish([
      stored([3], 2),
      ["BlockStored", [9n], null, tokens([90]), BLOCK, null, "GPU", null],
    ]);
    await engine.publish([stored([4, 5], 3)], { live: false }); // lost on the live socket
    // An event kind of a later engine version is ignored, as the tracker ignores unknown kinds.
    await engine.publish([stored([6], 5), ["BlockInactive", [engineHash(6)], "GPU"]]);
    const s = await reaches(model, 1, 4);
    expect(s.epoch).toMatch(/^relay-[0-9a-f]{8}-1\.0$/);
    expect(await deviceBlocks(model, [1, 2, 3, 4, 5, 6, 7])).toEqual({ 0: 0, 1: 6 });

    // Rank 1 is the busier one, so only the cached prefix makes it the cheaper choice.
    const busy = await call(
      "POST",
      "/add",
      `{"model_name":"${model}","worker_id":${WORKER},"dp_rank":1,"request_id":"busy","sequence_hashes":[77],"new_isl_tokens":8}`,
    );
    expect(busy.status, busy.text).toBe(201);
    const chosen = await call(
      "POST",
      "/selection/select_and_reserve",
      JSON.stringify({
        model_name: model,
        routing_group: "default",
        selection_id: "s1",
        token_ids: tokens([1, 2, 3, 4, 5, 6]),
      }),
    );
    expect(chosen.status, chosen.text).toBe(200);
    expect(chosen.text).toContain(`"worker_id":${WORKER}`);
    expect(JSON.parse(chosen.text.replaceAll(/"worker_id":(\d+)/g, '"worker_id":"$1"'))).toMatchObject({
      dp_rank: 1,
      overlap: { gpu: 24 },
    });

    const status = await relay.status();
    expect(status).toMatchObject({
      dp_rank: 1,
      epoch: s.epoch,
      acked_seq: "3",
      pending_batches: 0,
      lag_ms: 0,
    });
    // The replay at the start, and the one that filled the lost batch.
    expect(engine.replays).toBe(2);
    expect(relay.problems()).toEqual([]);
    expect(await relay.stop()).toBe(0);
  });

  it("loses nothing when the relay is killed and restarted: it continues its epoch from the replay", async () => {
    const model = await partition("relay-restart");
    const engine = await engineOn(1, { layout: "no-topic" });
    const first = new Relay(model, engine);
    await engine.subscribed();
    await engine.publish([stored([1], null)]);
    await engine.publish([stored([2], 1)]);
    const before = await reaches(model, 1, 2);

    await first.kill();
    await engine.subscribed(0);
    // Published while no relay runs: the replay socket keeps them.
    await engine.publish([stored([3], 2)]);
    await engine.publish([stored([4], 3)]);
    await engine.publish([["BlockRemoved", [engineHash(4)], "GPU"]]);

    const second = new Relay(model, engine);
    await engine.subscribed();
    const after = await reaches(model, 1, 5);
    expect(after.epoch).toBe(before.epoch); // the same epoch: the rank was not cleared
    expect(await deviceBlocks(model, [1, 2, 3, 4])).toEqual({ 0: 0, 1: 3 });
    await engine.publish([stored([4, 5], 3)]);
    expect((await reaches(model, 1, 6)).epoch).toBe(before.epoch);
    expect(await deviceBlocks(model, [1, 2, 3, 4, 5])).toEqual({ 0: 0, 1: 5 });
    expect(second.problems()).toEqual([]);
    expect(second.lines.find((l) => l.msg === "rank started")).toMatchObject({ resumed_epoch: before.epoch });
  });

  it("starts a new epoch, clearing the rank, when the engine restarted and numbers its batches from 0 again", async () => {
    const model = await partition("relay-engine-restart");
    const engine = await engineOn(1);
    const relay = new Relay(model, engine);
    await engine.subscribed();
    for (const b of [1, 2, 3]) await engine.publish([stored([b], b === 1 ? null : b - 1)]);
    const before = await reaches(model, 1, 3);
    await relay.kill();
    engine.close();

    // The engine and its relay start again (a pod restart): the new life's cache holds only block 7.
    const restarted = await engineOn(1);
    const relayed = new Relay(model, restarted);
    await restarted.subscribed();
    await restarted.publish([stored([7], null)]);
    const after = await poll("a new epoch", async () => {
      const s = await stream(model, 1);
      return s && s.epoch !== before.epoch && s.next_seq === 1 ? s : null;
    });
    expect(after.epoch).toMatch(/\.0$/);
    expect(await deviceBlocks(model, [1, 2, 3])).toEqual({ 0: 0, 1: 0 });
    expect(await deviceBlocks(model, [7])).toEqual({ 0: 0, 1: 1 });
    expect(relayed.problems()).toMatchObject([
      { msg: "new epoch: engine restarted", reason: "engine_restarted" },
    ]);
    await relayed.kill();
  });
});
