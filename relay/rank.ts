/**
 * One engine publisher (one data-parallel rank) relayed to the tracker: the live socket's reader
 * feeds an inbox, and one driver loop moves the core (`core.ts`) forward — taking what arrived,
 * replaying what is missing, making one call at a time, retrying with capped backoff. One call in
 * flight per rank keeps the tracker's sequence in order; batches that arrive meanwhile make the next
 * call bigger, so the relay batches more the slower the tracker answers.
 */
import { randomBytes } from "node:crypto";
import { type Break, type CoreLimits, type EngineBatch, RankLog, type TrackerCall } from "./core";
import type { EngineSockets } from "./engine";
import { eventCount } from "./frames";
import type { Log } from "./log";
import { messageOf, type TrackerClient } from "./tracker";

export interface RankOptions {
  dpRank: number;
  /** The longest a batch waits for others before it is posted. */
  batchMs: number;
  limits: CoreLimits;
  /** Backoff of retried calls: doubling from the first to the cap, with full jitter. */
  backoffMs: { first: number; cap: number };
}

/** What the relay exposes of one rank (`/status`, `/metrics`). */
export interface RankStatus {
  dp_rank: number;
  engine: string;
  epoch: string | null;
  /** Engine number of the newest batch the tracker acknowledged. */
  acked_seq: string | null;
  pending_batches: number;
  pending_events: number;
  /** How long the oldest batch not yet acknowledged has waited (0 when none waits). */
  lag_ms: number;
  batches_received: number;
  events_received: number;
  batches_applied: number;
  calls: number;
  call_retries: number;
  replays: number;
  replayed_batches: number;
  gaps: number;
  epochs: number;
  breaks: number;
  malformed_messages: number;
}

export class RankRelay {
  private readonly core: RankLog;
  private inbox: EngineBatch[] = [];
  private wake: (() => void) | null = null;
  private stopping = false;
  /** Stopped, and posting what it holds: retries keep their backoff. */
  private draining = false;
  /** The live socket failed: the relay exits non-zero once this rank has drained. */
  failed = false;
  private ackedSeq: bigint | null = null;
  private readonly counts = {
    batches_received: 0,
    events_received: 0,
    batches_applied: 0,
    calls: 0,
    call_retries: 0,
    replays: 0,
    replayed_batches: 0,
    gaps: 0,
    breaks: 0,
    malformed_messages: 0,
  };

  constructor(
    private readonly engine: EngineSockets,
    private readonly tracker: TrackerClient,
    private readonly options: RankOptions,
    private readonly log: Log,
  ) {
    const run = randomBytes(4).toString("hex");
    let epochs = 0;
    this.core = new RankLog(() => `relay-${run}-${++epochs}`, options.limits);
  }

  /** Runs until {@link stop}; then posts what it holds, for as long as `drainMs` allows. */
  async run(drainMs: number): Promise<void> {
    const reader = this.read();
    this.core.start(
      await this.retrying("read the rank's stream", () => this.tracker.stream(this.options.dpRank)),
    );
    this.logBreaks();
    const resumed = this.core.epoch;
    this.log.info("rank started", {
      dp_rank: this.options.dpRank,
      ...(resumed ? { resumed_epoch: resumed.name } : {}),
    });
    while (!this.stopping) await this.step(false);
    this.draining = true;
    const deadline = Date.now() + drainMs;
    while (Date.now() < deadline && this.core.nextCall(true) !== null) {
      if (!(await this.step(true))) break;
    }
    this.engine.close();
    await reader;
  }

  stop(): void {
    this.stopping = true;
    this.wake?.();
  }

  status(now: number): RankStatus {
    const backlog = this.core.backlog();
    return {
      dp_rank: this.options.dpRank,
      engine: this.engine.liveEndpoint,
      epoch: this.core.epoch?.name ?? null,
      acked_seq: this.ackedSeq?.toString() ?? null,
      pending_batches: backlog.batches + this.inbox.length,
      pending_events: backlog.events + this.inbox.reduce((n, b) => n + b.events, 0),
      lag_ms: backlog.oldestAt === null ? 0 : Math.max(0, now - backlog.oldestAt),
      epochs: backlog.epochs,
      ...this.counts,
    };
  }

  /** One move: take what arrived, replay what is missing, or make the next call. False when idle at a drain. */
  private async step(draining: boolean): Promise<boolean> {
    for (const batch of this.inbox.splice(0)) this.core.live(batch);
    this.logBreaks();
    const from = this.core.wantsReplay();
    if (from !== null) {
      this.core.replayed(await this.replay(from));
      this.logBreaks();
      return true;
    }
    const oldest = this.core.backlog().oldestAt;
    const due = oldest !== null && Date.now() - oldest >= this.options.batchMs;
    const call = this.core.nextCall(due || draining);
    if (call) {
      await this.post(call);
      return true;
    }
    if (draining) return false;
    await this.idle(oldest === null ? null : this.options.batchMs - (Date.now() - oldest));
    return true;
  }

  private async replay(from: bigint): Promise<EngineBatch[]> {
    this.counts.replays++;
    try {
      const replies = await this.engine.replay(from);
      const now = Date.now();
      this.counts.replayed_batches += replies.length;
      return replies.map((b) => ({ ...b, events: eventCount(b.payload), receivedAt: now }));
    } catch (err) {
      this.log.warn("replay failed", {
        dp_rank: this.options.dpRank,
        from: from.toString(),
        error: messageOf(err),
      });
      return [];
    }
  }

  private async post(first: TrackerCall): Promise<void> {
    let call = first;
    const { dpRank } = this.options;
    let attempt = 0;
    for (;;) {
      this.counts.calls++;
      const outcome = await this.tracker.post(
        dpRank,
        call.epoch.name,
        call.seq,
        call.batches.map((b) => b.payload),
      );
      switch (outcome.kind) {
        case "applied":
          this.counts.batches_applied += outcome.applied;
          this.ackedSeq = call.epoch.base + BigInt(outcome.nextSeq) - 1n;
          this.core.acknowledged(call, outcome.nextSeq);
          return;
        case "gap":
          this.counts.gaps++;
          this.log.warn("tracker is missing batches: replaying", {
            dp_rank: dpRank,
            epoch: call.epoch.name,
            sent_seq: call.seq,
            expected_seq: outcome.expectedSeq,
          });
          this.core.outOfSequence(call, outcome.expectedSeq);
          return;
        case "refused":
          this.log.warn("tracker refused a call", {
            dp_rank: dpRank,
            epoch: call.epoch.name,
            seq: call.seq,
            batches: call.batches.length,
            status: outcome.status,
            error: outcome.error,
          });
          this.core.refused(call, outcome.status, outcome.error);
          this.logBreaks();
          return;
        case "retry": {
          this.counts.call_retries++;
          const wait = this.backoff(attempt++);
          this.log.warn("call failed: retrying", {
            dp_rank: dpRank,
            seq: call.seq,
            status: outcome.status,
            error: outcome.error,
            retry_in_ms: Math.round(wait),
          });
          if (this.stopping && attempt > 3) return;
          await this.sleep(wait);
          // Batches that arrived meanwhile are taken first: the buffer's bound holds while retrying.
          for (const batch of this.inbox.splice(0)) this.core.live(batch);
          this.logBreaks();
          if (call.epoch !== this.core.epoch || this.core.wantsReplay() !== null) return;
          call = this.core.nextCall(true) ?? call;
        }
      }
    }
  }

  /** The live socket, into the inbox, until the engine's sockets close. */
  private async read(): Promise<void> {
    const malformed = (error: Error) => {
      this.counts.malformed_messages++;
      this.log.warn("malformed engine message skipped", {
        dp_rank: this.options.dpRank,
        error: error.message,
      });
    };
    try {
      for await (const wire of this.engine.live(malformed)) {
        const batch = { ...wire, events: eventCount(wire.payload), receivedAt: Date.now() };
        this.counts.batches_received++;
        this.counts.events_received += batch.events;
        this.inbox.push(batch);
        this.wake?.();
      }
    } catch (err) {
      // Without its live socket the rank can only drain: the process ends, for its supervisor to restart.
      this.failed = true;
      this.log.error("live socket failed", { dp_rank: this.options.dpRank, error: messageOf(err) });
      this.stop();
    }
  }

  private logBreaks(): void {
    for (const b of this.core.takeBreaks()) {
      this.counts.breaks++;
      this.log.warn(`new epoch: ${b.reason.replaceAll("_", " ")}`, {
        dp_rank: this.options.dpRank,
        ...breakFields(b),
      });
    }
  }

  /** Waits for a batch to arrive, or `ms` (null: no limit), or a stop. */
  private idle(ms: number | null): Promise<void> {
    if (this.inbox.length > 0 || this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        if (timer) clearTimeout(timer);
        if (this.wake === finish) this.wake = null;
        resolve();
      };
      const timer = ms === null ? null : setTimeout(finish, Math.max(0, ms));
      this.wake = finish;
    });
  }

  /** Waits `ms`; a stop cuts the wait short (but not during the drain), an arriving batch does not. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        if (this.wake === wake) this.wake = null;
        resolve();
      };
      const wake = () => {
        if (this.stopping && !this.draining) finish();
      };
      const timer = setTimeout(finish, ms);
      this.wake = wake;
    });
  }

  private backoff(attempt: number): number {
    const { first, cap } = this.options.backoffMs;
    return Math.random() * Math.min(cap, first * 2 ** attempt);
  }

  private async retrying<T>(what: string, action: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await action();
      } catch (err) {
        if (this.stopping) throw err;
        const wait = this.backoff(attempt);
        this.log.warn(`could not ${what}: retrying`, {
          dp_rank: this.options.dpRank,
          error: messageOf(err),
          retry_in_ms: Math.round(wait),
        });
        await this.sleep(wait);
      }
    }
  }
}

function breakFields(b: Break): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(b)) {
    if (key !== "reason") fields[key] = typeof value === "bigint" ? value.toString() : value;
  }
  return { reason: b.reason, ...fields };
}
