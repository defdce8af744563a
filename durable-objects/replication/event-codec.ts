/**
 * The replication wire format: MessagePack laid out as Dynamo's `ActiveSequenceEvent` and its batch
 * (reference §5.1, §5.5), so the Dynamo-shaped part of each event decodes with Dynamo's own types.
 * A batch is a map whose `events` array comes last, which lets an outbox that stored its events
 * already encoded (`encodeEvent`) ship them by splicing bytes (`encodeBatchFromEncoded`).
 *
 * Batch: { origin, incarnation, kind, first_seq, up_to, final, events: [event…] }
 * Event: see `event-encoder.ts`. Decoding throws `CodecError` on anything it cannot accept.
 */
import type { ReplicaEvent } from "../core/replica/events";
import { readEvent } from "./event-decoder";
import { writeEvent } from "./event-encoder";
import { MsgpackReader } from "./msgpack-reader";
import { MsgpackWriter } from "./msgpack-writer";
import type { ReplicaBatch, ReplicaBatchHeader } from "./types";

export { CodecError } from "./codec-error";
export { routerIdOf } from "./event-encoder";
export type { ReplicaBatch, ReplicaBatchHeader } from "./types";

const KINDS: readonly ReplicaBatchHeader["kind"][] = ["stream", "snapshot"];
/** One working buffer for every encode: encoding is synchronous, so calls never overlap. */
const writer = new MsgpackWriter();

/**
 * Encoded events are copied into slices of a shared slab rather than each into an ArrayBuffer of its
 * own (an ArrayBuffer is an allocation outside the heap that the collector must track: profiled under
 * a replicated `/batch` load, copying events out cost ~6% of the object's time). Their holders keep
 * them briefly and in order (the outbox's in-memory tail, a grouped row being built), so a slab is
 * released whole soon after it fills; whoever stores one in SQLite copies it (`bytesOf`).
 */
const SLAB_BYTES = 64 * 1024;
let slab = new Uint8Array(SLAB_BYTES);
let slabAt = 0;
/**
 * The event encoded last and its bytes. Events are never changed once made, and a change both kept in
 * the prefill timeline and shipped to peers is encoded twice in a row: the second time is free.
 */
let lastEvent: ReplicaEvent | null = null;
let lastBytes = new Uint8Array(0);

/** The event's bytes; treat them as read-only (they may be shared). */
export function encodeEvent(event: ReplicaEvent): Uint8Array {
  if (event === lastEvent) return lastBytes;
  const w = writer.reset();
  writeEvent(w, event);
  const n = w.pos;
  if (slabAt + n > slab.length) {
    slab = new Uint8Array(Math.max(SLAB_BYTES, n));
    slabAt = 0;
  }
  slab.set(w.buf.subarray(0, n), slabAt);
  lastBytes = slab.subarray(slabAt, slabAt + n);
  lastEvent = event;
  slabAt += n;
  return lastBytes;
}

export function decodeEvent(bytes: Uint8Array): ReplicaEvent {
  const r = new MsgpackReader(bytes);
  const event = readEvent(r);
  r.done();
  return event;
}

export function encodeBatch(batch: ReplicaBatch): Uint8Array {
  const w = writer.reset();
  writeHeader(w, batch, batch.events.length);
  for (const event of batch.events) writeEvent(w, event);
  return w.finish();
}

/** A batch of events encoded earlier by `encodeEvent`, copied in as they are. */
export function encodeBatchFromEncoded(header: ReplicaBatchHeader, encodedEvents: Uint8Array[]): Uint8Array {
  const w = writer.reset();
  let bytes = 0;
  for (const event of encodedEvents) bytes += event.length;
  w.ensure(bytes + 64);
  writeHeader(w, header, encodedEvents.length);
  for (const event of encodedEvents) w.raw(event);
  return w.finish();
}

function writeHeader(w: MsgpackWriter, h: ReplicaBatchHeader, events: number): void {
  w.mapHeader(7);
  w.str("origin");
  w.str(h.origin);
  w.str("incarnation");
  w.str(h.incarnation);
  w.str("kind");
  w.str(h.kind);
  w.str("first_seq");
  w.uint(h.firstSeq, "firstSeq");
  w.str("up_to");
  w.uint(h.upTo, "upTo");
  w.str("final");
  w.bool(h.final);
  w.str("events");
  w.arrayHeader(events);
}

export function decodeBatch(bytes: Uint8Array): ReplicaBatch {
  const r = new MsgpackReader(bytes);
  const batch: ReplicaBatch = {
    origin: "",
    incarnation: "",
    kind: "stream",
    firstSeq: 0,
    upTo: 0,
    final: false,
    events: [],
  };
  let seen = 0;
  for (let n = r.mapHeader("batch"); n > 0; n--) {
    const at = r.pos;
    const key = r.key("batch");
    const bit = readHeaderField(r, batch, key);
    if (bit === 0) r.skip(`batch.${key}`);
    else if (seen & bit) r.fail("batch", `no repeated key "${key}"`, at);
    seen |= bit;
  }
  if (seen !== 0x7f) r.fail("batch", "origin, incarnation, kind, first_seq, up_to, final and events");
  r.done();
  return batch;
}

/** Reads one batch field into `batch`; returns its bit, or 0 for a key this version does not know. */
function readHeaderField(r: MsgpackReader, batch: ReplicaBatch, key: string): number {
  switch (key) {
    case "origin":
      batch.origin = r.key("origin");
      return 1;
    case "incarnation":
      batch.incarnation = r.str("incarnation");
      return 2;
    case "kind": {
      const at = r.pos;
      const kind = r.key("kind");
      const known = KINDS.find((k) => k === kind);
      batch.kind = known ?? r.fail("kind", KINDS.join(" | "), at);
      return 4;
    }
    case "first_seq":
      batch.firstSeq = r.uint("first_seq");
      return 8;
    case "up_to":
      batch.upTo = r.uint("up_to");
      return 16;
    case "final":
      batch.final = r.bool("final");
      return 32;
    case "events":
      for (let n = r.arrayHeader("events"); n > 0; n--) batch.events.push(readEvent(r));
      return 64;
    default:
      return 0;
  }
}
