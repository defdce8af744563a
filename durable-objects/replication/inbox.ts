import type { BatchReply } from "./types";
import type { ReplicaBatchHeader } from "./types";

/** What a receiver remembers of one origin's stream: its incarnation and the last sequence applied. */
export interface StreamPosition {
  incarnation: string;
  applied: number;
}

export interface Admission {
  /** Index of the first event of the batch to apply (earlier ones were applied before). */
  from: number;
  /** The position to record once the events are applied, in the same synchronous step. */
  position: StreamPosition;
  reply: BatchReply;
}

/**
 * The receiving side of replication: applies each origin's stream at most once and in order. A
 * batch that starts past the next expected sequence number (events trimmed, or a new incarnation)
 * is refused with `gap`, which makes the origin rewind or resync by snapshot; events already
 * applied are skipped, so retries and duplicates change nothing. Snapshot pages are merged as they
 * come (merging is idempotent) and the final page moves the position to the snapshot's start.
 */
export class Inbox {
  private readonly streams = new Map<string, StreamPosition>();

  restore(origin: string, position: StreamPosition): void {
    this.streams.set(origin, position);
  }

  position(origin: string): StreamPosition | undefined {
    return this.streams.get(origin);
  }

  origins(): [string, StreamPosition][] {
    return [...this.streams];
  }

  admit(header: ReplicaBatchHeader, count: number): Admission {
    const known = this.streams.get(header.origin);
    const current: StreamPosition =
      known && known.incarnation === header.incarnation
        ? known
        : { incarnation: header.incarnation, applied: 0 };
    if (header.kind === "snapshot") {
      const applied = header.final ? Math.max(current.applied, header.upTo) : current.applied;
      return {
        from: 0,
        position: { incarnation: header.incarnation, applied },
        reply: { status: "ok", applied },
      };
    }
    if (header.firstSeq > current.applied + 1) {
      return { from: count, position: current, reply: { status: "gap", applied: current.applied } };
    }
    const from = Math.min(count, current.applied + 1 - header.firstSeq);
    const applied = Math.max(current.applied, header.firstSeq + count - 1);
    return { from, position: { incarnation: header.incarnation, applied }, reply: { status: "ok", applied } };
  }

  /** Records a position after its batch was applied. */
  commit(origin: string, position: StreamPosition): void {
    this.streams.set(origin, position);
  }
}
