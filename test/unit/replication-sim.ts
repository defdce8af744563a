import type { ReplicaEvent } from "../../durable-objects/core/replica/events";
import { applyReplicaEvent } from "../../durable-objects/core/replica/replica-merge";
import { NULL_STORE } from "../../durable-objects/core/store";
import { Tracker } from "../../durable-objects/core/tracker";
import {
  decodeBatch,
  encodeBatchFromEncoded,
  encodeEvent,
} from "../../durable-objects/replication/event-codec";
import { Inbox } from "../../durable-objects/replication/inbox";
import { Replicator } from "../../durable-objects/replication/replicator";
import type { BatchReply, EventLog, OutgoingBatch } from "../../durable-objects/replication/types";
import { snapshotEvents } from "../../durable-objects/replication/snapshot";

/**
 * Replicas of one tracker over a simulated network, driven step by step by a test: each replica is
 * a replicated `Tracker` with its `Replicator` (sender) and `Inbox` (receiver), as the object wires
 * them, minus the I/O. A send is an RPC call: its request may be dropped, duplicated, delayed behind
 * other traffic or cut by a partition; the sender waits for the answers of the calls in its window
 * (one by default), and a timeout fails one while its copy may still be delivered later (a stale
 * retransmission). Log
 * entries are events encoded by the wire codec, and batches travel as the MessagePack the object
 * sends, so the codec is exercised on every event too.
 */

export class MemoryLog implements EventLog<Uint8Array> {
  private entries: { seq: number; entry: Uint8Array; at: number }[] = [];
  private next = 1;

  append(seq: number, entry: Uint8Array, at: number): void {
    this.entries.push({ seq, entry, at });
    this.next = seq + 1;
  }

  read(afterSeq: number, max: number): { seq: number; entry: Uint8Array }[] {
    return this.entries
      .filter((e) => e.seq > afterSeq)
      .slice(0, max)
      .map(({ seq, entry }) => ({ seq, entry }));
  }

  trim(seq: number): void {
    this.entries = this.entries.filter((e) => e.seq > seq);
  }

  appendedAt(seq: number): number | undefined {
    return this.entries.find((e) => e.seq === seq)?.at;
  }

  oldest(): number {
    return this.entries[0]?.seq ?? this.next;
  }

  get size(): number {
    return this.entries.length;
  }
}

export interface SimOptions {
  names: string[];
  expiryMs: number;
  /** Each replica's clock runs this many ms ahead of the global one (default 0). */
  skews?: number[];
  maxBatch?: number;
  /** Stream batches a sender keeps in flight per peer (default 1). */
  maxInFlight?: number;
  maxBacklog?: number;
  flushMs?: number;
  /** Seed of the backoff jitter. */
  seed?: number;
}

export class SimReplica {
  readonly tracker: Tracker;
  readonly replicator: Replicator<Uint8Array>;
  readonly inbox = new Inbox();
  readonly log = new MemoryLog();

  constructor(
    readonly name: string,
    readonly skew: number,
    peers: string[],
    options: SimOptions,
    random: () => number,
  ) {
    const emitted = (event: ReplicaEvent) => {
      this.replicator.append(encodeEvent(event), this.pendingNow);
      this.log.trim(this.replicator.trimmable());
    };
    this.tracker = new Tracker({
      model: "model",
      tenant: "default",
      expiryMs: options.expiryMs,
      origin: name,
      replicated: true,
      store: { ...NULL_STORE, emitted },
    });
    this.replicator = new Replicator<Uint8Array>({
      origin: name,
      incarnation: `${name}-1`,
      peers,
      log: this.log,
      encode: encodeEvent,
      snapshot: () => snapshotEvents(this.tracker),
      flushMs: options.flushMs ?? 10,
      maxBatch: options.maxBatch,
      maxInFlight: options.maxInFlight,
      maxBacklog: options.maxBacklog,
      random,
    });
  }

  /** The replica's clock during the call in progress (the store hook is not given `now`). */
  pendingNow = 0;
}

interface Call {
  id: number;
  from: string;
  to: string;
  batch: OutgoingBatch<Uint8Array>;
  /** The batch as sent. */
  bytes: Uint8Array;
}

export type SendFate = "deliver" | "drop" | "duplicate";
export type ReplyFate = "ok" | "replyLost" | "overloaded";

export class Sim {
  readonly replicas: SimReplica[];
  /** Global clock, epoch ms; replica `r` reads `time + r.skew`. */
  time: number;
  /** Request copies on the wire, in no particular delivery order. */
  readonly wire: Call[] = [];
  /** The calls their senders are waiting on, by call id. */
  readonly pending = new Map<number, Call>();
  /** Cut links `from>to` (partitions cut both directions). */
  readonly cut = new Set<string>();
  readonly stats = {
    batches: 0,
    snapshotPages: 0,
    dropped: 0,
    duplicated: 0,
    stale: 0,
    timeouts: 0,
    /** Stream events applied, all receivers together (at most once each: origins' totals × peers). */
    applied: 0,
  };
  private nextCall = 1;

  constructor(options: SimOptions, start: number) {
    this.time = start;
    let state = options.seed ?? 1;
    const random = () => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      // Small jitter: retries stay within a few seconds, so settling leaves live requests to compare.
      return (state / 2 ** 32) * 0.05;
    };
    this.replicas = options.names.map(
      (name, i) =>
        new SimReplica(
          name,
          options.skews?.[i] ?? 0,
          options.names.filter((n) => n !== name),
          options,
          random,
        ),
    );
  }

  replica(name: string): SimReplica {
    return this.replicas.find((r) => r.name === name)!;
  }

  nowAt(r: SimReplica): number {
    return this.time + r.skew;
  }

  /** Runs a local operation at replica `r` at its clock. */
  at<T>(r: SimReplica, fn: (tracker: Tracker, now: number) => T): T {
    r.pendingNow = this.nowAt(r);
    return fn(r.tracker, r.pendingNow);
  }

  /** Sends `from`'s next batches to `to`, as many as are due and fit in its window. */
  send(from: SimReplica, to: SimReplica, fate: SendFate = "deliver"): void {
    const now = this.nowAt(from);
    for (let batch = from.replicator.takeBatch(to.name, now); batch; ) {
      this.stats.batches++;
      if (batch.kind === "snapshot") this.stats.snapshotPages++;
      const link = `${from.name}>${to.name}`;
      if (fate === "drop" || this.cut.has(link)) {
        this.stats.dropped++;
        from.replicator.failed(to.name, batch, now, false);
        return;
      }
      const bytes = encodeBatchFromEncoded(batch, batch.events);
      const call = { id: this.nextCall++, from: from.name, to: to.name, batch, bytes };
      this.pending.set(call.id, call);
      this.wire.push(call);
      if (fate === "duplicate") {
        this.stats.duplicated++;
        this.wire.push(call);
      }
      batch = from.replicator.takeBatch(to.name, now);
    }
  }

  /** Every replica sends what is due to every peer. */
  flush(fate: SendFate = "deliver"): void {
    for (const from of this.replicas)
      for (const to of this.replicas) if (from !== to) this.send(from, to, fate);
  }

  /** Delivers the copy at `index` of the wire; its answer reaches the sender only if still awaited. */
  deliver(index: number, fate: ReplyFate = "ok"): void {
    const [call] = this.wire.splice(index, 1);
    if (!call) return;
    const link = `${call.from}>${call.to}`;
    const sender = this.replica(call.from);
    const awaited = this.pending.has(call.id);
    if (!awaited) this.stats.stale++;
    if (this.cut.has(link)) return;
    if (fate === "overloaded") {
      if (!awaited) return;
      this.pending.delete(call.id);
      sender.replicator.failed(call.to, call.batch, this.nowAt(sender), true);
      return;
    }
    const reply = this.receive(this.replica(call.to), call.bytes);
    if (!awaited || fate === "replyLost") return;
    this.pending.delete(call.id);
    sender.replicator.acknowledge(call.to, call.batch, reply, this.nowAt(sender));
    sender.log.trim(sender.replicator.trimmable());
  }

  /** The sender of the `index`-th awaited call gives up on it; its copies stay on the wire. */
  timeout(index: number): void {
    const call = [...this.pending.values()][index];
    if (call) this.giveUp(call);
  }

  private giveUp(call: Call): void {
    this.stats.timeouts++;
    this.pending.delete(call.id);
    const sender = this.replica(call.from);
    sender.replicator.failed(call.to, call.batch, this.nowAt(sender), false);
  }

  /** Cuts every link between the replicas in `side` and the others (an empty side heals all). */
  partition(side: Set<string>): void {
    this.cut.clear();
    for (const a of this.replicas) {
      for (const b of this.replicas) {
        if (side.has(a.name) !== side.has(b.name)) this.cut.add(`${a.name}>${b.name}`);
      }
    }
  }

  /**
   * Heals the network and runs rounds (deliver everything, time out calls whose copies are gone,
   * move the clock to the next due batch, send it) until nothing is due, awaited or on the wire.
   * @returns the rounds it took; throws if `maxRounds` is not enough.
   */
  settle(maxRounds = 2_000): number {
    this.cut.clear();
    for (let round = 0; round < maxRounds; round++) {
      while (this.wire.length > 0) this.deliver(0);
      for (const call of [...this.pending.values()]) this.giveUp(call);
      let next: number | null = null;
      for (const r of this.replicas) {
        const due = r.replicator.dueAt();
        if (due !== null && (next === null || due - r.skew < next)) next = due - r.skew;
      }
      if (next === null) return round;
      this.time = Math.max(this.time, next);
      this.flush();
    }
    throw new Error(`replicas did not settle within ${maxRounds} rounds`);
  }

  private receive(r: SimReplica, bytes: Uint8Array): BatchReply {
    const now = this.nowAt(r);
    const batch = decodeBatch(bytes);
    const { from, position, reply } = r.inbox.admit(batch, batch.events.length);
    for (const event of batch.events.slice(from)) applyReplicaEvent(r.tracker, event, now);
    if (batch.kind === "stream") this.stats.applied += batch.events.length - from;
    r.inbox.commit(batch.origin, position);
    return reply;
  }
}
