/**
 * The relay's pure core for one (worker, rank) publisher: the batches the engine published and the
 * tracker has not yet acknowledged, the epoch they belong to, and the decisions that keep the
 * tracker's view exact (SPEC §9). No sockets, no clocks, no randomness: the shell (`rank.ts`) feeds
 * it what the engine and the tracker said, and does what it asks.
 *
 * Sequence numbers. The engine numbers its batches (8-byte big-endian; vLLM and SGLang from 0 per
 * engine life, TensorRT-LLM from `time.time_ns()`). The tracker takes numbers up to 2^53 − 1, so the
 * relay posts each epoch's numbers from 0: tracker number = engine number − the epoch's `base`, the
 * engine number of its first batch. The base is written into the epoch's name (`<id>.<base>`), so a
 * restarted relay that reads the epoch back from the tracker knows which engine number comes next.
 *
 * Epochs. An epoch is one unbroken run of the engine's batches as the tracker holds them. The relay
 * stays in its epoch while every batch gets through in order, through live delivery or replay; it
 * starts a new one (the tracker then clears the rank) when it can no longer be sure of that: the
 * engine's sequence went back (the engine restarted), the replay socket no longer holds what is
 * missing, the tracker refused a batch outright, or the buffer overflowed. A new epoch starts from
 * the oldest batch the engine can still replay, so the tracker learns as much as the engine keeps.
 * Every break is reported to the shell, which logs it: no batch is ever dropped in silence.
 */

/** One engine batch as the relay keeps it: its engine sequence number and the payload's bytes. */
export interface EngineBatch {
  seq: bigint;
  payload: Uint8Array;
  /** Events in the batch (a TensorRT-LLM heartbeat has none). */
  events: number;
  /** When the relay received it (ms): the lag of what is not yet acknowledged counts from here. */
  receivedAt: number;
}

export interface Epoch {
  name: string;
  /** The engine sequence number the tracker knows as 0 in this epoch. */
  base: bigint;
}

/** One `POST /kv_events` the core wants made. */
export interface TrackerCall {
  epoch: Epoch;
  /** The tracker's sequence number of the first batch (`x-kv-event-seq`). */
  seq: number;
  batches: EngineBatch[];
}

/** Why the core gave up an epoch, for the shell's log line. */
export type Break =
  | { reason: "engine_restarted"; lastSeq: bigint; seq: bigint }
  | { reason: "replay_missing"; from: bigint; oldest: bigint | null }
  | { reason: "refused_batch"; seq: bigint; status: number; error: string }
  | { reason: "buffer_overflow"; dropped: number; droppedEvents: number }
  | { reason: "not_resumable"; epoch: string };

export interface CoreLimits {
  /** Events per call: the call is made once this many wait (the shell also flushes on a timer). */
  callEvents: number;
  /** Hard caps of one call, below the tracker's (`MAX_KV_EVENTS_PER_CALL`, `MAX_KV_BODY_BYTES`). */
  maxCallEvents: number;
  maxCallBytes: number;
  /** Unacknowledged events kept before the oldest are given up (a `buffer_overflow` break). */
  maxBufferedEvents: number;
}

export const DEFAULT_LIMITS: CoreLimits = {
  callEvents: 256,
  maxCallEvents: 4_096,
  maxCallBytes: 4 * 1024 * 1024,
  maxBufferedEvents: 2_000_000,
};

/** The relay's epoch names: `<id>.<base>`, the id unique to the relay's run and epoch. */
export function epochName(id: string, base: bigint): string {
  return `${id}.${base}`;
}

/** The base of an epoch a relay named, or null for a name it did not make. */
export function baseOf(name: string): bigint | null {
  const match = /\.([0-9]{1,20})$/.exec(name);
  if (!match) return null;
  const base = BigInt(match[1]!);
  return base < 2n ** 64n ? base : null;
}

export class RankLog {
  epoch: Epoch | null = null;
  /** Batches not yet acknowledged, ascending and consecutive from `queue[0].seq`. */
  private queue: EngineBatch[] = [];
  private queuedEvents = 0;
  /** The engine number expected next: the one after the newest batch taken. */
  private expected: bigint | null = null;
  /** The newest number seen live: live delivery only goes up within one engine life. */
  private lastLive: bigint | null = null;
  /** Where the core wants the engine's replay to start, or null when nothing is missing. */
  private replayFrom: bigint | null = null;
  /** The payloads of the last replay, until live passes it: a live batch repeating one is no news. */
  private replayedBytes = new Map<bigint, Uint8Array>();
  /** Live batches that arrived past a hole, kept until the replay has filled it. */
  private held: EngineBatch[] = [];
  /** Batches per call after a refusal of a larger call: halved until the refused batch stands alone. */
  private callBatches = Number.POSITIVE_INFINITY;
  /** Breaks not yet reported. */
  private breaks: Break[] = [];
  private epochs = 0;

  constructor(
    private readonly newEpochId: () => string,
    private readonly limits: CoreLimits = DEFAULT_LIMITS,
  ) {}

  /**
   * The start: the tracker's stream of this rank (its epoch and the number it expects next), or
   * null when it has none. A relay epoch is continued from the engine number after what the tracker
   * holds, replayed from the engine; anything else starts a new epoch from the engine's oldest batch.
   */
  start(stream: { epoch: string; nextSeq: number } | null): void {
    const base = stream ? baseOf(stream.epoch) : null;
    if (stream && base !== null) {
      this.epoch = { name: stream.epoch, base };
      this.expected = base + BigInt(stream.nextSeq);
      this.replayFrom = this.expected;
      return;
    }
    if (stream) this.breaks.push({ reason: "not_resumable", epoch: stream.epoch });
    this.replayFrom = 0n;
  }

  /** A batch from the engine's live socket. */
  live(batch: EngineBatch): void {
    const last = this.lastLive;
    this.lastLive = batch.seq;
    if (last !== null && batch.seq <= last) {
      // Live delivery only goes up within one engine life: the engine restarted.
      this.restarted(last, batch);
      return;
    }
    if (this.replayFrom !== null) {
      this.held.push(batch);
      return;
    }
    this.fromLive(batch);
  }

  /** Where the engine's replay should start, while something is missing. */
  wantsReplay(): bigint | null {
    return this.replayFrom;
  }

  /**
   * The engine's replay from {@link wantsReplay}: every batch it still holds from there, ascending
   * (none when it holds none, or when the relay has no replay socket or it did not answer).
   */
  replayed(batches: EngineBatch[]): void {
    const from = this.replayFrom;
    if (from === null) return;
    this.replayFrom = null;
    const run = consecutive(batches.filter((b) => b.seq >= from));
    const resuming = this.epoch !== null;
    if (resuming && (run.length === 0 ? this.heldStartsAfter(from) : run[0]!.seq !== from)) {
      // What the tracker lacks is gone from the engine: start over from what it still has.
      this.breaks.push({ reason: "replay_missing", from, oldest: run[0]?.seq ?? null });
      this.abandonEpoch();
    }
    for (const batch of run) {
      this.replayedBytes.set(batch.seq, batch.payload);
      this.take(batch);
    }
    const held = this.held;
    this.held = [];
    for (let i = 0; i < held.length; i++) {
      if (this.replayFrom !== null) {
        // A restart or a new hole among them: the rest waits for the next replay.
        this.held.push(...held.slice(i));
        break;
      }
      this.fromLive(held[i]!);
    }
  }

  /** The next call to make, or null when nothing waits or too little waits and `flush` is false. */
  nextCall(flush: boolean): TrackerCall | null {
    if (this.queue.length === 0 || this.epoch === null) return null;
    if (!flush && this.queuedEvents < this.limits.callEvents) return null;
    const batches: EngineBatch[] = [];
    let events = 0;
    let bytes = 0;
    for (const batch of this.queue) {
      const over =
        events + batch.events > this.limits.maxCallEvents ||
        bytes + batch.payload.byteLength > this.limits.maxCallBytes;
      if (batches.length > 0 && (over || batches.length >= this.callBatches)) break;
      batches.push(batch);
      events += batch.events;
      bytes += batch.payload.byteLength;
    }
    return { epoch: this.epoch, seq: Number(batches[0]!.seq - this.epoch.base), batches };
  }

  /** The tracker applied or acknowledged the call and expects `nextSeq` next. */
  acknowledged(call: TrackerCall, nextSeq: number): void {
    if (call.epoch !== this.epoch) return;
    const next = call.epoch.base + BigInt(nextSeq);
    this.drop((b) => b.seq < next);
    // A call got through: calls may be whole again (a later refusal splits anew).
    this.callBatches = Number.POSITIVE_INFINITY;
  }

  /** The tracker refused the call as out of sequence: it expects `expectedSeq`; replay from there. */
  outOfSequence(call: TrackerCall, expectedSeq: number): void {
    if (call.epoch !== this.epoch) return;
    const expected = call.epoch.base + BigInt(expectedSeq);
    const first = this.queue[0]?.seq ?? this.expected;
    if (first === null || expected >= first) return;
    // Hold what is queued while the replay fetches what the tracker lacks.
    this.held = [...this.queue, ...this.held];
    this.queue = [];
    this.queuedEvents = 0;
    this.expected = expected;
    this.replayFrom = expected;
  }

  /**
   * The tracker refused the call's content (a 4xx other than 409). A call of several batches is
   * split until the refused batch stands alone; that one is given up, and a new epoch starts after it.
   */
  refused(call: TrackerCall, status: number, error: string): void {
    if (call.epoch !== this.epoch) return;
    if (call.batches.length > 1) {
      this.callBatches = Math.max(1, Math.floor(call.batches.length / 2));
      return;
    }
    const bad = call.batches[0]!;
    this.breaks.push({ reason: "refused_batch", seq: bad.seq, status, error });
    this.drop((b) => b.seq <= bad.seq);
    this.callBatches = Number.POSITIVE_INFINITY;
    this.newEpoch(bad.seq + 1n);
  }

  /** Breaks since the last call, for the log. */
  takeBreaks(): Break[] {
    const breaks = this.breaks;
    this.breaks = [];
    return breaks;
  }

  /** What the shell exposes: unacknowledged batches and events, and when the oldest arrived. */
  backlog(): { batches: number; events: number; oldestAt: number | null; epochs: number } {
    const oldest = this.queue[0] ?? this.held[0];
    return {
      batches: this.queue.length + this.held.length,
      events: this.queuedEvents + this.held.reduce((n, b) => n + b.events, 0),
      oldestAt: oldest?.receivedAt ?? null,
      epochs: this.epochs,
    };
  }

  /**
   * A live batch, in order of arrival. One numbered below the next expected is the same batch the
   * replay already gave (live and replay overlap at a start), unless its bytes differ: then the
   * engine restarted and is numbering a new life from the start again.
   */
  private fromLive(batch: EngineBatch): void {
    if (this.expected !== null && batch.seq < this.expected) {
      const replayed = this.replayedBytes.get(batch.seq);
      if (!replayed || !sameBytes(replayed, batch.payload)) this.restarted(this.expected - 1n, batch);
      return;
    }
    // Live has passed the replay: no later live batch can repeat one of it.
    this.replayedBytes.clear();
    this.take(batch);
  }

  private restarted(lastSeq: bigint, batch: EngineBatch): void {
    this.breaks.push({ reason: "engine_restarted", lastSeq, seq: batch.seq });
    this.abandonEpoch();
    this.replayedBytes.clear();
    this.held = [batch];
    this.replayFrom = 0n;
  }

  /** Appends the batch expected next; a batch past it opens a hole, filled from the replay. */
  private take(batch: EngineBatch): void {
    if (this.epoch === null) this.newEpoch(batch.seq);
    if (this.expected !== null && batch.seq < this.expected) return;
    if (this.expected !== null && batch.seq > this.expected) {
      this.held.push(batch);
      this.replayFrom = this.expected;
      return;
    }
    this.queue.push(batch);
    this.queuedEvents += batch.events;
    this.expected = batch.seq + 1n;
    this.bound();
  }

  private heldStartsAfter(from: bigint): boolean {
    return this.held.length > 0 && this.held[0]!.seq > from;
  }

  /** Past the buffer's bound the oldest batches go, and a new epoch starts at the first kept. */
  private bound(): void {
    if (this.queuedEvents <= this.limits.maxBufferedEvents) return;
    let dropped = 0;
    let droppedEvents = 0;
    while (this.queue.length > 1 && this.queuedEvents > this.limits.maxBufferedEvents / 2) {
      const batch = this.queue.shift()!;
      this.queuedEvents -= batch.events;
      dropped++;
      droppedEvents += batch.events;
    }
    this.breaks.push({ reason: "buffer_overflow", dropped, droppedEvents });
    this.newEpoch(this.queue[0]!.seq);
  }

  /** Gives up the epoch: what is queued for it is superseded by the next epoch's clear. */
  private abandonEpoch(): void {
    this.epoch = null;
    this.expected = null;
    this.queue = [];
    this.queuedEvents = 0;
  }

  /** A new epoch whose first batch is engine number `base`; what is queued from there moves into it. */
  private newEpoch(base: bigint): void {
    this.epochs++;
    this.epoch = { name: epochName(this.newEpochId(), base), base };
    this.drop((b) => b.seq < base);
    if (this.queue.length === 0) this.expected = base;
  }

  private drop(gone: (batch: EngineBatch) => boolean): void {
    while (this.queue.length > 0 && gone(this.queue[0]!)) {
      this.queuedEvents -= this.queue.shift()!.events;
    }
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The longest run of consecutive numbers from the first batch. */
function consecutive(batches: EngineBatch[]): EngineBatch[] {
  const sorted = [...batches].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
  const run: EngineBatch[] = [];
  for (const batch of sorted) {
    const last = run.at(-1);
    if (last && batch.seq === last.seq) continue;
    if (last && batch.seq !== last.seq + 1n) break;
    run.push(batch);
  }
  return run;
}
