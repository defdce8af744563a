/**
 * The engines' ZMQ messages (engine-kv-events §2): live `[topic, seq, payload]` on the PUB socket,
 * and the replies of the replay ROUTER to a DEALER's `[b"", start_seq]`. Two reply layouts are in
 * use: `[b"", seq, payload]` (vLLM ≤ 0.25, SGLang) and `[b"", topic, seq, payload]` (vLLM ≥ 0.26,
 * TensorRT-LLM), each ended by a message whose seq is eight 0xff bytes and whose last frame is empty.
 */
import { decode } from "@msgpack/msgpack";

export type Frames = readonly Uint8Array[];

/** One engine batch off the wire, before the relay stamps when it arrived. */
export interface WireBatch {
  seq: bigint;
  payload: Uint8Array;
}

export const END_SEQ = 0xffff_ffff_ffff_ffffn;

export function seqBytes(seq: bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, seq);
  return bytes;
}

function seqOf(frame: Uint8Array, what: string): bigint {
  if (frame.byteLength !== 8)
    throw new Error(`${what}: the sequence frame has ${frame.byteLength} bytes, not 8`);
  return new DataView(frame.buffer, frame.byteOffset, 8).getBigUint64(0);
}

/** A live message: exactly `[topic, seq, payload]`. */
export function liveBatch(frames: Frames): WireBatch {
  if (frames.length !== 3)
    throw new Error(`live message: ${frames.length} frames, not 3 (topic, seq, payload)`);
  return { seq: seqOf(frames[1]!, "live message"), payload: frames[2]! };
}

/** A replay reply as a DEALER receives it: a batch, or the end marker. */
export function replayReply(frames: Frames): WireBatch | "end" {
  // The ROUTER's empty delimiter comes first; SGLang's replies may come without it.
  const body = frames.length >= 3 && frames[0]!.byteLength === 0 ? frames.slice(1) : frames;
  if (body.length !== 2 && body.length !== 3) {
    throw new Error(`replay reply: ${frames.length} frames, not [seq, payload] or [topic, seq, payload]`);
  }
  const seq = seqOf(body.at(-2)!, "replay reply");
  if (seq === END_SEQ && body.at(-1)!.byteLength === 0) return "end";
  return { seq, payload: body.at(-1)! };
}

/**
 * Events in a batch payload: the length of `events` in `[ts, events, rank?]` or `{ts, events, …}`.
 * A payload the relay cannot read still goes to the tracker, which names what is wrong with it;
 * here it counts as one event, so the relay's call sizes stay bounded.
 */
export function eventCount(payload: Uint8Array): number {
  try {
    const batch = decode(payload, { useBigInt64: true }) as unknown;
    const events = Array.isArray(batch)
      ? batch[1]
      : batch instanceof Map
        ? batch.get("events")
        : (batch as { events?: unknown } | null)?.events;
    return Array.isArray(events) ? events.length : 1;
  } catch {
    return 1;
  }
}
