/**
 * An engine's KV-event publisher on real ZMQ sockets, as vLLM's `ZmqEventPublisher` runs it
 * (engine-kv-events §2): live `[topic, seq(8 B BE), payload]` on a publisher, a replay ROUTER that
 * answers `[b"", start_seq]` with every buffered batch from there and an end marker, in vLLM ≥ 0.26's
 * layout (`[b"", topic, seq, payload]`, end `[b"", b"", ff×8, b""]`) or the older one (no topic).
 *
 * The publisher is an XPUB, which sends exactly what a PUB sends and also reports subscriptions, so
 * a test knows when the relay listens instead of guessing with a sleep. `publish(…, { live: false })`
 * keeps a batch in the replay buffer only: a batch the relay's socket lost.
 */
import { encode } from "@msgpack/msgpack";
import { Router, XPublisher } from "zeromq";

const END = new Uint8Array(8).fill(0xff);

function seqBytes(seq: bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, seq);
  return bytes;
}

export class ZmqEngine {
  private readonly pub = new XPublisher({ linger: 0 });
  private readonly router = new Router({ linger: 0 });
  private readonly buffer: { seq: bigint; payload: Uint8Array }[] = [];
  private nextSeq: bigint;
  private subscribers = 0;
  private readonly waiters: (() => void)[] = [];
  liveEndpoint = "";
  replayEndpoint = "";
  replays = 0;

  constructor(
    private readonly dpRank: number,
    private readonly options: { firstSeq?: bigint; topic?: string; layout?: "topic" | "no-topic" } = {},
  ) {
    this.nextSeq = options.firstSeq ?? 0n;
  }

  async start(): Promise<this> {
    await this.pub.bind("tcp://127.0.0.1:*");
    await this.router.bind("tcp://127.0.0.1:*");
    this.liveEndpoint = this.pub.lastEndpoint!;
    this.replayEndpoint = this.router.lastEndpoint!;
    void this.watchSubscriptions();
    void this.serveReplays();
    return this;
  }

  /** Publishes one batch `[ts, events, data_parallel_rank]` under the next sequence number. */
  async publish(events: unknown[], { live = true } = {}): Promise<bigint> {
    const seq = this.nextSeq++;
    const payload = encode([Date.now() / 1000, events, this.dpRank], { useBigInt64: true });
    this.buffer.push({ seq, payload });
    if (live) await this.pub.send([this.topic(), seqBytes(seq), payload]);
    return seq;
  }

  /** Resolves once `n` subscribers listen (and at once if they already do). */
  async subscribed(n = 1): Promise<void> {
    while (this.subscribers !== n) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.pub.close();
    this.router.close();
  }

  private topic(): Uint8Array {
    return new TextEncoder().encode(this.options.topic ?? "");
  }

  private async watchSubscriptions(): Promise<void> {
    try {
      for await (const [message] of this.pub) {
        if (message?.[0] === 1) this.subscribers++;
        else if (message?.[0] === 0) this.subscribers--;
        for (const wake of this.waiters.splice(0)) wake();
      }
    } catch {
      // closed
    }
  }

  private async serveReplays(): Promise<void> {
    try {
      for await (const [identity, , start] of this.router) {
        this.replays++;
        const from = new DataView(start!.buffer, start!.byteOffset, 8).getBigUint64(0);
        const topic = this.options.layout === "no-topic" ? [] : [this.topic()];
        for (const { seq, payload } of this.buffer) {
          if (seq >= from)
            await this.router.send([identity!, new Uint8Array(0), ...topic, seqBytes(seq), payload]);
        }
        const endTopic = this.options.layout === "no-topic" ? [] : [new Uint8Array(0)];
        await this.router.send([identity!, new Uint8Array(0), ...endTopic, END, new Uint8Array(0)]);
      }
    } catch {
      // closed
    }
  }
}
