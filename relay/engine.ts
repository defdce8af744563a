/**
 * One engine publisher's two sockets (engine-kv-events §2): a SUB on its live PUB, every topic, and
 * a DEALER on its replay ROUTER. The PUB binds at the engine (`tcp://*:5557`), so both connect; ZMQ
 * reconnects by itself when the engine restarts.
 */
import { Dealer, Subscriber } from "zeromq";
import { type Frames, liveBatch, replayReply, seqBytes, type WireBatch } from "./frames";

/** vLLM's default `hwm`: the relay's SUB queues as much as the engine's PUB does. */
const LIVE_HWM = 100_000;

export class EngineSockets {
  private readonly sub = new Subscriber({ receiveHighWaterMark: LIVE_HWM, linger: 0 });
  private dealer: Dealer | null = null;

  constructor(
    readonly liveEndpoint: string,
    readonly replayEndpoint: string | null,
    private readonly replayTimeoutMs: number,
  ) {
    this.sub.connect(liveEndpoint);
    this.sub.subscribe();
  }

  /**
   * Live batches until the socket closes. A message that is not `[topic, seq, payload]` is handed
   * to `malformed` and skipped: it carries no sequence number the relay could post under.
   */
  async *live(malformed: (error: Error) => void): AsyncGenerator<WireBatch> {
    for (;;) {
      let frames: Frames;
      try {
        frames = await this.sub.receive();
      } catch (err) {
        if (this.sub.closed) return;
        throw err;
      }
      try {
        yield liveBatch(frames);
      } catch (err) {
        malformed(err as Error);
      }
    }
  }

  /**
   * Every batch the engine still buffers from `from` on, ascending, up to its end marker. Empty when
   * there is no replay socket; throws when the engine does not answer within the timeout (its
   * replay is best effort) or answers with frames the relay cannot read.
   */
  async replay(from: bigint): Promise<WireBatch[]> {
    if (this.replayEndpoint === null) return [];
    const dealer = this.replayDealer();
    const batches: WireBatch[] = [];
    try {
      await dealer.send([new Uint8Array(0), seqBytes(from)]);
      for (;;) {
        const reply = replayReply(await dealer.receive());
        if (reply === "end") return batches;
        batches.push(reply);
      }
    } catch (err) {
      // A reply still on its way would answer the next request: that socket is done.
      this.dealer = null;
      dealer.close();
      throw err;
    }
  }

  close(): void {
    this.sub.close();
    this.dealer?.close();
    this.dealer = null;
  }

  private replayDealer(): Dealer {
    if (this.dealer === null) {
      this.dealer = new Dealer({
        linger: 0,
        receiveTimeout: this.replayTimeoutMs,
        sendTimeout: this.replayTimeoutMs,
      });
      this.dealer.connect(this.replayEndpoint!);
    }
    return this.dealer;
  }
}
