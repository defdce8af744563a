import { describe, expect, it } from "vitest";
import { baseOf, type EngineBatch, epochName, RankLog, type TrackerCall } from "../../relay/core";

/**
 * The relay's core for one rank, driven as the shell drives it: live batches, replays, and the
 * tracker's answers. A batch's payload is its seq and a life tag, so a restarted engine's batch
 * differs in bytes from the old life's batch of the same number, as a real one does (its ts).
 */
const batch = (seq: number, life = 0, events = 1): EngineBatch => ({
  seq: BigInt(seq),
  payload: new Uint8Array([life, seq & 0xff, (seq >> 8) & 0xff]),
  events,
  receivedAt: seq,
});
const range = (from: number, to: number, life = 0) =>
  Array.from({ length: to - from }, (_, i) => batch(from + i, life));

const LIMITS = { callEvents: 1, maxCallEvents: 100, maxCallBytes: 1 << 20, maxBufferedEvents: 1_000 };

function log(limits = LIMITS): RankLog {
  let n = 0;
  return new RankLog(() => `e${++n}`, limits);
}

/** The engine numbers a call carries. */
const seqs = (call: TrackerCall | null) => call?.batches.map((b) => Number(b.seq)) ?? [];

/** Acknowledges every call as applied, as a tracker in sequence would, and returns what was posted. */
function drain(core: RankLog): { epoch: string; seq: number; engine: number[] }[] {
  const posted = [];
  for (let call = core.nextCall(true); call; call = core.nextCall(true)) {
    posted.push({ epoch: call.epoch.name, seq: call.seq, engine: seqs(call) });
    core.acknowledged(call, call.seq + call.batches.length);
  }
  return posted;
}

describe("relay core: starting", () => {
  it("starts a new epoch from the oldest batch the engine replays, numbered from 0 for the tracker", () => {
    const core = log();
    core.start(null);
    expect(core.wantsReplay()).toBe(0n);
    core.live(batch(12));
    core.replayed(range(5, 12));
    expect(core.wantsReplay()).toBeNull();
    expect(core.epoch).toEqual({ name: "e1.5", base: 5n });
    expect(drain(core)).toEqual([{ epoch: "e1.5", seq: 0, engine: [5, 6, 7, 8, 9, 10, 11, 12] }]);
    expect(core.takeBreaks()).toEqual([]);
  });

  it("without a replay starts at the first live batch, however large its number (TensorRT-LLM's time_ns)", () => {
    const core = log();
    core.start(null);
    const first = 1_764_770_000_000_000_000n;
    core.live({ ...batch(0), seq: first });
    core.replayed([]);
    core.live({ ...batch(1), seq: first + 1n });
    expect(core.epoch?.base).toBe(first);
    const call = core.nextCall(true)!;
    expect([call.epoch.name, call.seq, call.batches.map((b) => b.seq - first)]).toEqual([
      `e1.${first}`,
      0,
      [0n, 1n],
    ]);
  });

  it("resumes the tracker's epoch from the number after what it holds, replayed from the engine", () => {
    const core = log();
    core.start({ epoch: "e7.100", nextSeq: 20 });
    expect(core.wantsReplay()).toBe(120n);
    core.live(batch(124));
    core.replayed(range(120, 124));
    expect(drain(core)).toEqual([{ epoch: "e7.100", seq: 20, engine: [120, 121, 122, 123, 124] }]);
    expect(core.takeBreaks()).toEqual([]);
  });

  it("resumes with nothing to replay when the engine published nothing since", () => {
    const core = log();
    core.start({ epoch: "e7.100", nextSeq: 20 });
    core.replayed([]);
    expect(core.nextCall(true)).toBeNull();
    core.live(batch(120));
    expect(drain(core)).toEqual([{ epoch: "e7.100", seq: 20, engine: [120] }]);
  });

  it("starts over when the replay no longer holds what the tracker lacks", () => {
    const core = log();
    core.start({ epoch: "e7.100", nextSeq: 20 });
    core.replayed(range(150, 153));
    expect(core.takeBreaks()).toEqual([{ reason: "replay_missing", from: 120n, oldest: 150n }]);
    expect(drain(core)).toEqual([{ epoch: "e1.150", seq: 0, engine: [150, 151, 152] }]);
  });

  it("starts over when the engine restarted while the relay was down (live below what the tracker holds)", () => {
    const core = log();
    core.start({ epoch: "e7.0", nextSeq: 500 });
    core.replayed([]);
    core.live(batch(3, 1));
    expect(core.takeBreaks()).toEqual([{ reason: "engine_restarted", lastSeq: 499n, seq: 3n }]);
    expect(core.wantsReplay()).toBe(0n);
    core.replayed(range(0, 4, 1));
    expect(drain(core)).toEqual([{ epoch: "e1.0", seq: 0, engine: [0, 1, 2, 3] }]);
  });

  it("does not resume an epoch it did not name", () => {
    const core = log();
    core.start({ epoch: "someone-else", nextSeq: 3 });
    expect(core.takeBreaks()).toEqual([{ reason: "not_resumable", epoch: "someone-else" }]);
    expect(core.wantsReplay()).toBe(0n);
  });
});

describe("relay core: in an epoch", () => {
  function running(): RankLog {
    const core = log();
    core.start(null);
    core.replayed(range(0, 3));
    drain(core);
    return core;
  }

  it("fills a hole in the live stream from the replay, in the same epoch", () => {
    const core = running();
    core.live(batch(3));
    core.live(batch(6));
    core.live(batch(7));
    expect(core.wantsReplay()).toBe(4n);
    core.replayed(range(4, 8));
    expect(drain(core)).toEqual([{ epoch: "e1.0", seq: 3, engine: [3, 4, 5, 6, 7] }]);
    expect(core.takeBreaks()).toEqual([]);
  });

  it("starts over when the replay cannot fill a hole", () => {
    const core = running();
    core.live(batch(9));
    core.replayed(range(7, 10));
    expect(core.takeBreaks()).toEqual([{ reason: "replay_missing", from: 3n, oldest: 7n }]);
    expect(drain(core)).toEqual([{ epoch: "e2.7", seq: 0, engine: [7, 8, 9] }]);
  });

  it("starts over when no replay answers a hole", () => {
    const core = running();
    core.live(batch(5));
    core.replayed([]);
    expect(core.takeBreaks()).toEqual([{ reason: "replay_missing", from: 3n, oldest: null }]);
    expect(drain(core)).toEqual([{ epoch: "e2.5", seq: 0, engine: [5] }]);
  });

  it("takes a live batch the replay already gave as a repeat, but one with other bytes as a restart", () => {
    const core = log();
    core.start(null);
    core.replayed(range(0, 5));
    core.live(batch(4));
    expect(core.takeBreaks()).toEqual([]);
    core.live(batch(5));
    expect(drain(core)).toEqual([{ epoch: "e1.0", seq: 0, engine: [0, 1, 2, 3, 4, 5] }]);

    const idle = log();
    idle.start(null);
    idle.replayed(range(0, 5));
    drain(idle);
    idle.live(batch(0, 1)); // an engine idle since the start restarts and numbers from 0 again
    expect(idle.takeBreaks()).toEqual([{ reason: "engine_restarted", lastSeq: 4n, seq: 0n }]);
    idle.replayed([batch(0, 1)]);
    expect(drain(idle)).toEqual([{ epoch: "e2.0", seq: 0, engine: [0] }]);
  });

  it("starts a new epoch when the live sequence goes back", () => {
    const core = running();
    core.live(batch(3));
    core.live(batch(0, 1));
    expect(core.takeBreaks()).toEqual([{ reason: "engine_restarted", lastSeq: 3n, seq: 0n }]);
    core.replayed([batch(0, 1)]);
    core.live(batch(1, 1));
    expect(drain(core)).toEqual([{ epoch: "e2.0", seq: 0, engine: [0, 1] }]);
  });

  it("replays from the number a 409 names, then posts in order again", () => {
    const core = running();
    core.live(batch(3));
    core.live(batch(4));
    const call = core.nextCall(true)!;
    core.outOfSequence(call, 1);
    expect(core.wantsReplay()).toBe(1n);
    expect(core.nextCall(true)).toBeNull();
    core.replayed(range(1, 5));
    expect(drain(core)).toEqual([{ epoch: "e1.0", seq: 1, engine: [1, 2, 3, 4] }]);
  });

  it("drops what the tracker acknowledged, also past the call (another sender's repeat)", () => {
    const core = running();
    for (const b of range(3, 8)) core.live(b);
    const call = core.nextCall(true)!;
    core.acknowledged(call, 6);
    expect(seqs(core.nextCall(true))).toEqual([6, 7]);
  });

  it("splits a refused call until the refused batch stands alone, gives it up and starts after it", () => {
    const core = running();
    for (const b of range(3, 7)) core.live(b);
    const whole = core.nextCall(true)!;
    expect(seqs(whole)).toEqual([3, 4, 5, 6]);
    core.refused(whole, 400, "bad");
    const half = core.nextCall(true)!;
    expect(seqs(half)).toEqual([3, 4]);
    core.acknowledged(half, half.seq + 2);
    let call = core.nextCall(true)!;
    expect(seqs(call)).toEqual([5, 6]);
    core.refused(call, 400, "bad");
    call = core.nextCall(true)!;
    expect(seqs(call)).toEqual([5]);
    core.refused(call, 422, "batch 0 is for data_parallel_rank 1");
    expect(core.takeBreaks()).toEqual([
      { reason: "refused_batch", seq: 5n, status: 422, error: "batch 0 is for data_parallel_rank 1" },
    ]);
    expect(drain(core)).toEqual([{ epoch: "e2.6", seq: 0, engine: [6] }]);
  });

  it("past its bound gives up the oldest half and starts a new epoch at the first kept", () => {
    const core = log({ ...LIMITS, maxBufferedEvents: 10 });
    core.start(null);
    core.replayed([]);
    for (const b of range(0, 11)) core.live(b);
    expect(core.takeBreaks()).toEqual([{ reason: "buffer_overflow", dropped: 6, droppedEvents: 6 }]);
    expect(drain(core)).toEqual([{ epoch: "e2.6", seq: 0, engine: [6, 7, 8, 9, 10] }]);
  });

  it("waits for callEvents unless flushed, and keeps a call under its caps", () => {
    const core = log({ callEvents: 10, maxCallEvents: 4, maxCallBytes: 1 << 20, maxBufferedEvents: 1_000 });
    core.start(null);
    core.replayed([]);
    for (const b of range(0, 6)) core.live(b);
    expect(core.nextCall(false)).toBeNull();
    expect(seqs(core.nextCall(true))).toEqual([0, 1, 2, 3]);
    for (const b of range(6, 12)) core.live(b);
    expect(seqs(core.nextCall(false))).toEqual([0, 1, 2, 3]);
  });

  it("ignores an answer to a call of an epoch it has since given up", () => {
    const core = running();
    core.live(batch(3));
    const call = core.nextCall(true)!;
    core.live(batch(0, 1));
    core.acknowledged(call, 4);
    core.refused(call, 400, "late");
    expect(core.takeBreaks()).toEqual([{ reason: "engine_restarted", lastSeq: 3n, seq: 0n }]);
    expect(core.backlog().batches).toBe(1);
  });
});

describe("relay epoch names", () => {
  it("carry the base, which a restarted relay reads back", () => {
    expect(baseOf(epochName("relay-3f2a-1", 18_446_744_073_709_551_615n))).toBe(18_446_744_073_709_551_615n);
    expect(baseOf("relay-3f2a-1.0")).toBe(0n);
    expect(baseOf("bench-3")).toBeNull();
    expect(baseOf("x.18446744073709551616")).toBeNull();
  });
});
