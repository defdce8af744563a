import { physicalMs } from "../core/replica/clock";
import { applyReplicaEvent } from "../core/replica/replica-merge";
import type { Tracker } from "../core/tracker";
import { ReplicationCounters } from "../metrics/metrics-counters";
import { decodeBatch, encodeBatchFromEncoded, encodeEvent } from "./event-codec";
import { Inbox } from "./inbox";
import type { ReplicatedStore } from "./replicated-store";
import type { PeerStatus } from "../metrics/metrics-types";
import { Replicator } from "./replicator";
import type { BatchReply, OutgoingBatch } from "./types";
import { snapshotEvents } from "./snapshot";
import type { SqlReplicaStore } from "./sql-replica-store";

/** A peer tracker object as this one calls it. */
export interface PeerStub {
  replicate(batch: Uint8Array): Promise<BatchReply>;
}

export interface PeerSyncOptions {
  origin: string;
  peers: string[];
  tracker: Tracker;
  store: ReplicatedStore;
  replicaStore: SqlReplicaStore;
  /** A fresh stub for a peer (called again after any failure: a stub that threw may be broken). */
  stubOf: (peer: string) => PeerStub;
  flushMs: number;
  maxBacklog: number;
}

/** Batches one peer may be sent in one alarm run before others get their turn. */
const MAX_BATCHES_PER_RUN = 16;
/**
 * Stream batches in flight to one peer: across regions a round trip takes tens of milliseconds, and
 * one batch per round trip would cap a peer at 256 events per round trip.
 */
/** Bytes of events in one replication RPC: KV-event changes are large, and an RPC carries 32 MiB at most. */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;
const MAX_IN_FLIGHT = 4;
/** A peer call that has not answered by then counts as failed (a late answer is harmless). */
const PEER_TIMEOUT_MS = 10_000;

/**
 * Replication of one tracker object with its peers (the same model and tenant in the other
 * replicas): events accepted here go to the outbox in the change's own write and are shipped from
 * the alarm; batches from peers are applied at most once and in order, with their stream
 * position, in one synchronous step.
 */
export class PeerSync {
  readonly replicator: Replicator<Uint8Array>;
  readonly inbox = new Inbox();
  /** Events sent, applied and deduplicated, and resyncs, since the object started (for metrics). */
  readonly counters = new ReplicationCounters();
  private readonly stubs = new Map<string, PeerStub>();

  constructor(private readonly options: PeerSyncOptions) {
    const { replicaStore, tracker } = options;
    this.replicator = new Replicator<Uint8Array>({
      origin: options.origin,
      incarnation: replicaStore.incarnation(),
      peers: options.peers,
      log: replicaStore.outbox,
      encode: encodeEvent,
      snapshot: () => snapshotEvents(tracker),
      flushMs: options.flushMs,
      maxInFlight: MAX_IN_FLIGHT,
      maxBacklog: options.maxBacklog,
      maxBatchBytes: MAX_BATCH_BYTES,
      sizeOf: (entry) => entry.length,
    });
    options.store.onEmitted = (event) => {
      this.replicator.append(encodeEvent(event), Date.now());
    };
  }

  /** Restores records, cursors and stream positions from storage. */
  hydrate(now: number): void {
    const { replicaStore, tracker } = this.options;
    replicaStore.hydrate(tracker.records, tracker.clock, tracker.departures);
    this.replicator.restoreLastSeq(replicaStore.outbox.lastSeq());
    for (const peer of replicaStore.peers()) this.replicator.restorePeer(peer.name, peer.acked, peer.resync);
    this.replicator.resume(now);
    for (const [origin, position] of replicaStore.origins()) this.inbox.restore(origin, position);
  }

  dueAt(): number | null {
    return this.replicator.dueAt();
  }

  /** Applies a batch from a peer; the reply tells it what this replica has applied of its stream. */
  receive(bytes: Uint8Array, now: number): BatchReply {
    const batch = decodeBatch(bytes);
    const admission = this.inbox.admit(batch, batch.events.length);
    if (admission.reply.status !== "ok") return admission.reply;
    const { tracker, replicaStore } = this.options;
    for (let i = admission.from; i < batch.events.length; i++)
      applyReplicaEvent(tracker, batch.events[i]!, now);
    // A stream event's key was stamped when its origin accepted it; a snapshot's keys are older than
    // the resync, so they say nothing of the stream's delay. Across machines the clocks' difference
    // is part of the figure (an origin ahead would give a negative delay: counted as 0).
    if (batch.kind === "stream") {
      const delays = this.counters.applyDelays(batch.origin);
      for (let i = admission.from; i < batch.events.length; i++)
        delays.observe(Math.max(0, now - physicalMs(batch.events[i]!.ts)));
    }
    this.counters.received(batch.origin, batch.events.length - admission.from, admission.from);
    this.inbox.commit(batch.origin, admission.position);
    replicaStore.saveOrigin(batch.origin, admission.position);
    return admission.reply;
  }

  /** Ships what is due to every peer (peers in parallel, each in order), then trims the outbox. */
  async flush(): Promise<void> {
    await Promise.all(this.replicator.peerNames().map((peer) => this.flushPeer(peer)));
    this.options.replicaStore.outbox.trim(this.replicator.trimmable());
  }

  status(now: number): PeerStatus[] {
    return this.replicator.status(now);
  }

  /**
   * Ships what is due to `peer`, keeping up to {@link MAX_IN_FLIGHT} batches in flight through one
   * stub (E-order delivers them in order) and handling the answers in order.
   */
  private async flushPeer(peer: string): Promise<void> {
    const sends: { batch: OutgoingBatch<Uint8Array>; reply: Promise<BatchReply> }[] = [];
    let taken = 0;
    for (;;) {
      while (taken < MAX_BATCHES_PER_RUN) {
        const batch = this.replicator.takeBatch(peer, Date.now());
        if (!batch) break;
        taken++;
        const bytes = encodeBatchFromEncoded(batch, batch.events);
        sends.push({ batch, reply: withTimeout(this.stub(peer).replicate(bytes), PEER_TIMEOUT_MS) });
      }
      const next = sends.shift();
      if (!next) return;
      const { batch } = next;
      try {
        const reply = await next.reply;
        const current = this.replicator.acknowledge(peer, batch, reply, Date.now());
        if (current && reply.status === "ok") this.counters.sent(peer, batch.events.length);
        if (current && reply.status === "ok" && batch.kind === "snapshot" && batch.final) {
          this.counters.resynced(peer);
        }
      } catch (error) {
        this.stubs.delete(peer);
        this.replicator.failed(peer, batch, Date.now(), isOverloaded(error));
        this.saveCursor(peer);
        // The failure forgot the batches behind this one; their answers no longer matter.
        for (const rest of sends) rest.reply.catch(() => {});
        return;
      }
      this.saveCursor(peer);
    }
  }

  private saveCursor(peer: string): void {
    const cursor = this.replicator.cursors().find((c) => c.peer === peer);
    if (cursor) this.options.replicaStore.savePeer(peer, cursor.acked, cursor.resync);
  }

  private stub(peer: string): PeerStub {
    let stub = this.stubs.get(peer);
    if (!stub) {
      stub = this.options.stubOf(peer);
      this.stubs.set(peer, stub);
    }
    return stub;
  }
}

function isOverloaded(error: unknown): boolean {
  return (
    typeof error === "object" && error !== null && (error as { overloaded?: unknown }).overloaded === true
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`peer did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
