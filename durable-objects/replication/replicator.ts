import type { ReplicaEvent } from "../core/replica/events";
import type { PeerStatus } from "../metrics/metrics-types";
import { backoffMs, newPeer, type Peer } from "./peer-state";
import type { BatchReply, EventLog, OutgoingBatch, ReplicatorOptions } from "./types";

/**
 * The sending side of replication, as a synchronous state machine: which batch goes to which peer
 * when, and what an answer or a failure changes. The object does the I/O (RPC to peers, SQLite for
 * the log); tests drive it over a simulated network. Entries are opaque (`E`): the object ships
 * events it stored already encoded, so nothing is encoded twice.
 *
 * Per peer: events go out in sequence order, at most `maxBatch` per batch and up to `maxInFlight`
 * batches in flight (one stub, used in order: E-order keeps the stream ordered), so a distant peer
 * is not held to one batch per round trip. An acknowledgement advances the peer's cursor; a failure
 * or a gap rewinds what was sent to it, and the batches still in flight behind it are answered as
 * duplicates or gaps by the receiver, which applies each event at most once and in order. The log
 * keeps what some peer has not acknowledged. A failure backs off exponentially with full jitter
 * (overload at least a second), never a hot loop. A peer whose backlog passes `maxBacklog`, or who
 * reports a gap the log can no longer fill, is switched to a snapshot resync: it is sent this
 * replica's whole state as events (merging is idempotent, so the snapshot needs no freezing), then
 * the stream resumes after the sequence number the snapshot started at.
 */

export class Replicator<E> {
  readonly origin: string;
  readonly incarnation: string;
  private readonly peers = new Map<string, Peer>();
  private readonly log: EventLog<E>;
  private readonly options: Required<
    Pick<ReplicatorOptions<E>, "flushMs" | "maxBatch" | "maxInFlight" | "maxBacklog">
  >;
  private readonly encode: (event: ReplicaEvent) => E;
  private readonly snapshot: () => Iterator<ReplicaEvent>;
  private readonly random: () => number;
  private readonly maxBatchBytes: number;
  private readonly sizeOf: (entry: E) => number;
  private seq: number;

  constructor(options: ReplicatorOptions<E>) {
    this.origin = options.origin;
    this.incarnation = options.incarnation;
    this.log = options.log;
    this.encode = options.encode;
    this.snapshot = options.snapshot;
    this.random = options.random ?? Math.random;
    this.maxBatchBytes = options.maxBatchBytes ?? Number.POSITIVE_INFINITY;
    this.sizeOf = options.sizeOf ?? (() => 0);
    this.seq = options.lastSeq ?? 0;
    this.options = {
      flushMs: options.flushMs,
      maxBatch: options.maxBatch ?? 256,
      maxInFlight: options.maxInFlight ?? 1,
      maxBacklog: options.maxBacklog ?? 100_000,
    };
    for (const name of options.peers) {
      this.peers.set(name, newPeer(name));
    }
  }

  get lastSeq(): number {
    return this.seq;
  }

  peerNames(): string[] {
    return [...this.peers.keys()];
  }

  /** Restores the last sequence number used (the outbox's newest row survives every trim). */
  restoreLastSeq(seq: number): void {
    this.seq = Math.max(this.seq, seq);
  }

  /** Restores a peer's acknowledged position (and resync flag) from storage. */
  restorePeer(name: string, acked: number, resync: boolean): void {
    const peer = this.peers.get(name);
    if (!peer) return;
    peer.acked = acked;
    peer.sent = acked;
    if (resync) peer.state = "resync";
  }

  /** After a restore: everything still owed to a peer is due at once. */
  resume(now: number): void {
    for (const peer of this.peers.values()) {
      if (peer.acked < this.seq || peer.state === "resync") peer.queuedSince = now - this.options.flushMs;
    }
  }

  /** Queues an event accepted here; returns its sequence number. */
  append(entry: E, now: number): number {
    const seq = ++this.seq;
    this.log.append(seq, entry, now);
    for (const peer of this.peers.values()) {
      if (peer.queuedSince === null) peer.queuedSince = now;
      // Past the cap the peer is caught up by snapshot instead, and stops holding the log.
      const from = peer.state === "resync" ? (peer.resync?.upTo ?? seq) : peer.acked;
      if (seq - from > this.options.maxBacklog) this.startResync(peer);
    }
    return seq;
  }

  /** The earliest time a batch is due for some peer (null: nothing to send). */
  dueAt(): number | null {
    let due: number | null = null;
    for (const peer of this.peers.values()) {
      const at = this.peerDueAt(peer);
      if (at !== null && (due === null || at < due)) due = at;
    }
    return due;
  }

  /** The next batch for `peer` if one is due at `now` and its window has room. */
  takeBatch(name: string, now: number): OutgoingBatch<E> | null {
    const peer = this.peers.get(name);
    if (!peer) return null;
    const due = this.peerDueAt(peer);
    if (due === null || due > now) return null;
    if (peer.state === "resync") return this.snapshotPage(peer);
    const entries = this.withinBytes(this.log.read(peer.sent, this.options.maxBatch));
    if (entries.length === 0) {
      peer.queuedSince = null;
      return null;
    }
    if (entries[0]!.seq !== peer.sent + 1) {
      // The log no longer holds what this peer needs: only a snapshot can catch it up.
      if (peer.inFlight > 0) return null;
      this.startResync(peer);
      return this.snapshotPage(peer);
    }
    peer.inFlight++;
    peer.sent = entries[entries.length - 1]!.seq;
    this.requeue(peer, now);
    return this.batch(
      peer,
      "stream",
      entries[0]!.seq,
      0,
      false,
      entries.map((e) => e.entry),
    );
  }

  /** Records a peer's answer to a batch in flight; false if the batch was forgotten by a rewind. */
  acknowledge(name: string, batch: OutgoingBatch<E>, reply: BatchReply, now: number): boolean {
    const peer = this.peers.get(name);
    if (!peer || batch.epoch !== peer.epoch) return false;
    peer.inFlight--;
    peer.failures = 0;
    if (peer.state === "backing_off") peer.state = "ok";
    if (batch.kind === "snapshot") {
      // Only the final page of the resync in progress completes it: a backlog past the cap
      // restarts the resync while a page of the old one is in flight, and that page's snapshot
      // stops at the old start, so acknowledging it would skip the events after that.
      if (batch.final && peer.resync && batch.upTo === peer.resync.upTo) {
        peer.acked = peer.resync.upTo;
        peer.sent = peer.acked;
        peer.resync = null;
        peer.state = "ok";
      }
    } else if (reply.status === "gap") {
      // The receiver lost our stream's start (or never had it), or a batch before this one failed:
      // resend from what it has, if held.
      if (reply.applied + 1 >= this.log.oldest()) {
        peer.acked = reply.applied;
        this.rewind(peer);
      } else this.startResync(peer);
    } else {
      peer.acked = Math.max(peer.acked, reply.applied);
      peer.sent = Math.max(peer.sent, peer.acked);
    }
    this.requeue(peer, now);
    return true;
  }

  /**
   * Records a failed send of `batch`; `overloaded` peers are given at least a second. What was sent
   * after the acknowledged position goes again after the backoff.
   */
  failed(name: string, batch: OutgoingBatch<E>, now: number, overloaded: boolean): void {
    const peer = this.peers.get(name);
    if (!peer || batch.epoch !== peer.epoch) return;
    if (batch.kind === "stream" && batch.firstSeq + batch.events.length - 1 <= peer.acked) {
      // A later batch's answer already acknowledged these events: nothing was lost.
      peer.inFlight--;
      return;
    }
    this.rewind(peer);
    peer.failures++;
    peer.retryAt = now + backoffMs(peer.failures, overloaded, this.random);
    if (peer.state !== "resync") peer.state = "backing_off";
    // A snapshot that failed mid-way starts over: its source iterator may have moved on.
    if (peer.resync) this.startResync(peer);
  }

  /**
   * Sequence number up to which no peer needs the log any more: every streaming peer has
   * acknowledged it, and a resyncing peer only needs what comes after its snapshot's start.
   */
  trimmable(): number {
    let upTo = this.seq;
    for (const peer of this.peers.values()) {
      const needsAfter = peer.state === "resync" ? (peer.resync?.upTo ?? this.seq) : peer.acked;
      upTo = Math.min(upTo, needsAfter);
    }
    return upTo;
  }

  status(now: number): PeerStatus[] {
    return [...this.peers.values()].map((peer) => {
      const oldest = peer.acked < this.seq ? this.log.appendedAt(peer.acked + 1) : undefined;
      return {
        peer: peer.name,
        state: peer.state,
        queued: this.seq - peer.acked,
        acked: peer.acked,
        oldestUnackedMs: oldest === undefined ? 0 : Math.max(0, now - oldest),
        failures: peer.failures,
      };
    });
  }

  /** Peer cursors as they should be persisted. */
  cursors(): { peer: string; acked: number; resync: boolean }[] {
    return [...this.peers.values()].map((p) => ({
      peer: p.name,
      acked: p.acked,
      resync: p.state === "resync",
    }));
  }

  /**
   * Sets when the oldest event not yet sent to `peer` was queued. It was queued before now, so the
   * flush deadline runs from then: timed from an answer, every batch of a backlog would wait
   * `flushMs` more, and a peer behind could ship no faster than `maxBatch` per `flushMs`.
   */
  private requeue(peer: Peer, now: number): void {
    if (peer.state === "resync") peer.queuedSince = now - this.options.flushMs;
    else if (peer.sent < this.seq) peer.queuedSince = this.log.appendedAt(peer.sent + 1) ?? now;
    else peer.queuedSince = null;
  }

  private peerDueAt(peer: Peer): number | null {
    // Snapshot pages go one at a time: each comes from the same iterator, and only the final one counts.
    const window = peer.state === "resync" ? 1 : this.options.maxInFlight;
    if (peer.inFlight >= window) return null;
    const pending = peer.state === "resync" || peer.sent < this.seq;
    if (!pending) return null;
    const flushAt = (peer.queuedSince ?? 0) + this.options.flushMs;
    return peer.failures > 0 ? Math.max(peer.retryAt, flushAt) : flushAt;
  }

  /** Forgets the batches in flight: sending resumes after the acknowledged position. */
  private rewind(peer: Peer): void {
    peer.epoch++;
    peer.inFlight = 0;
    peer.sent = peer.acked;
  }

  private startResync(peer: Peer): void {
    peer.state = "resync";
    this.rewind(peer);
    peer.resync = { source: this.snapshot(), upTo: this.seq };
  }

  private snapshotPage(peer: Peer): OutgoingBatch<E> {
    if (!peer.resync) this.startResync(peer);
    const resync = peer.resync!;
    const events: E[] = [];
    let final = false;
    let bytes = 0;
    while (events.length < this.options.maxBatch && bytes < this.maxBatchBytes) {
      const next = resync.source.next();
      if (next.done) {
        final = true;
        break;
      }
      const entry = this.encode(next.value);
      events.push(entry);
      bytes += this.sizeOf(entry);
    }
    peer.inFlight++;
    return this.batch(peer, "snapshot", 0, resync.upTo, final, events);
  }

  /** The leading entries within `maxBatchBytes` (the first one always). */
  private withinBytes(entries: { seq: number; entry: E }[]): { seq: number; entry: E }[] {
    if (this.maxBatchBytes === Number.POSITIVE_INFINITY) return entries;
    let bytes = 0;
    for (let i = 0; i < entries.length; i++) {
      bytes += this.sizeOf(entries[i]!.entry);
      if (bytes > this.maxBatchBytes && i > 0) return entries.slice(0, i);
    }
    return entries;
  }

  private batch(
    peer: Peer,
    kind: "stream" | "snapshot",
    firstSeq: number,
    upTo: number,
    final: boolean,
    events: E[],
  ): OutgoingBatch<E> {
    const { origin, incarnation } = this;
    return { origin, incarnation, kind, firstSeq, upTo, final, events, epoch: peer.epoch };
  }
}
