/**
 * Hostile input on `POST /kv_events`, in workerd: fast-check sequences that interleave valid calls
 * (in sequence, repeats, gaps, new epochs; their answers predicted by a small model of the rank's
 * sequence and blocks) with refused ones: bytes that are no engine batch, a valid body cut short or
 * with one byte changed, bad headers, a bad query, a wrong content type. A refused call must get a
 * 4xx with an `error` string, never a 5xx, and leave the stream and the index as they were; at the
 * end the rank holds exactly the model's blocks.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseExact } from "./api-http";
import { body, range, schedule, selectionPost, uniquePartition, type Partition } from "./booking-http";
import { blockRemoved, blockStored, engineBatch, postKv } from "./kv-http";
import { send } from "./reliability-http";

/** Sequences per run: about 20 s on a loaded 2-core machine. */
const RUNS = 25;
const TIMEOUT_MS = 300_000;
/** Single-block prompts 1..BLOCKS: each held or not, so the model is a set. */
const BLOCKS = 5;

type Valid =
  | { kind: "store" | "remove"; block: number; seqOffset: number }
  | { kind: "epoch"; block: number; seq: number };

type Hostile =
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "cut"; base: Valid; keep: number }
  | { kind: "flip"; base: Valid; at: number; value: number }
  | { kind: "header"; base: Valid; name: string; value: string }
  | { kind: "query"; base: Valid; worker: string }
  | { kind: "type"; base: Valid; type: string };

const block = fc.integer({ min: 1, max: BLOCKS });
const valid: fc.Arbitrary<Valid> = fc.oneof(
  // seqOffset: 0 continues, negative repeats, positive leaves a gap.
  {
    arbitrary: fc.record({
      kind: fc.constantFrom("store" as const, "remove" as const),
      block,
      seqOffset: fc.constantFrom(0, 0, 0, -1, 2),
    }),
    weight: 5,
  },
  fc.record({ kind: fc.constant("epoch" as const), block, seq: fc.integer({ min: 0, max: 1_000 }) }),
);
const hostile: fc.Arbitrary<Hostile> = fc.oneof(
  // Led by 0xc1, the one byte MessagePack never uses: no engine batch, whatever follows.
  fc.record({
    kind: fc.constant("bytes" as const),
    bytes: fc.uint8Array({ minLength: 0, maxLength: 48 }).map((b) => Uint8Array.of(0xc1, ...b)),
  }),
  fc.record({ kind: fc.constant("cut" as const), base: valid, keep: fc.integer({ min: 1, max: 40 }) }),
  // The batch's array header: any other first byte than [ts, events(, rank)]'s breaks its shape.
  fc.record({
    kind: fc.constant("flip" as const),
    base: valid,
    at: fc.constant(0),
    value: fc.integer({ min: 0, max: 255 }).filter((v) => v !== 0x92 && v !== 0x93),
  }),
  fc.record({
    kind: fc.constant("header" as const),
    base: valid,
    name: fc.constant("x-kv-event-seq"),
    value: fc.constantFrom("", "-1", "1.5", "x", "99999999999999999"),
  }),
  fc.record({
    kind: fc.constant("header" as const),
    base: valid,
    name: fc.constant("x-kv-event-epoch"),
    value: fc.constantFrom("", "e".repeat(200)),
  }),
  fc.record({
    kind: fc.constant("query" as const),
    base: valid,
    worker: fc.constantFrom("", "-1", "x", "18446744073709551616", "9"),
  }),
  fc.record({
    kind: fc.constant("type" as const),
    base: valid,
    type: fc.constantFrom("application/json", "text/plain", ""),
  }),
);
const step = fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: hostile, weight: 2 });

interface Model {
  epoch: string;
  nextSeq: number | null;
  held: Set<number>;
  epochs: number;
}

/** The call a valid step makes against the model's state: its body, header seq and epoch. */
function callOf(step: Valid, m: Model): { bytes: Uint8Array; seq: number; epoch: string } {
  if (step.kind === "epoch") {
    return { bytes: engineBatch([blockStored([step.block])]), seq: step.seq, epoch: `e${m.epochs + 1}` };
  }
  const event = step.kind === "store" ? blockStored([step.block]) : blockRemoved([step.block]);
  const seq = Math.max(0, (m.nextSeq ?? 0) + step.seqOffset);
  return { bytes: engineBatch([event]), seq, epoch: m.epoch };
}

/** What the rank's publisher list and the index say now: what a refused call must leave as it was. */
async function state(p: Partition): Promise<string> {
  const streams = await send("GET", `/kv_events?model_name=${p.model}`);
  const scores = await Promise.all(
    range(1, BLOCKS).map((b) =>
      selectionPost("/overlap_scores", body(p, { token_ids: range(4 * b - 3, 4 * b) })),
    ),
  );
  return [streams.text.replace(/"lag_ms":\d+/g, ""), ...scores.map((s) => s.text)].join("\n");
}

async function heldBlocks(p: Partition): Promise<number[]> {
  const held: number[] = [];
  for (const b of range(1, BLOCKS)) {
    const scores = parseExact(
      (await selectionPost("/overlap_scores", body(p, { token_ids: range(4 * b - 3, 4 * b) }))).text,
    ) as { workers: { device_blocks: number }[] };
    if (scores.workers[0]!.device_blocks > 0) held.push(b);
  }
  return held;
}

describe("POST /kv_events under hostile input", () => {
  it(
    "answers every refused call with a 4xx and no change, and ends holding exactly the model's blocks",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 10 }), async (steps) => {
          const p = uniquePartition("kv-fuzz");
          await schedule(p, [{ workerId: 1n }]);
          const m: Model = { epoch: "e0", nextSeq: null, held: new Set(), epochs: 0 };
          for (const s of steps) {
            if (isValid(s)) {
              const c = callOf(s, m);
              const answer = await postKv(p, { workerId: 1n, seq: c.seq, epoch: c.epoch }, c.bytes);
              const fresh = m.nextSeq === null || c.epoch !== m.epoch;
              if (!fresh && c.seq > m.nextSeq!) {
                expect({ status: answer.status, json: parseExact(answer.text) }).toMatchObject({
                  status: 409,
                  json: { expected_seq: m.nextSeq },
                });
                continue;
              }
              expect(answer.status, answer.text).toBe(200);
              if (fresh) {
                m.held.clear();
                m.epoch = c.epoch;
                m.epochs++;
              }
              if (fresh || c.seq === m.nextSeq) {
                if (s.kind === "remove") m.held.delete(s.block);
                else m.held.add(s.block);
                m.nextSeq = c.seq + 1;
              }
              continue;
            }
            const before = await state(p);
            const answer = await hostileCall(p, s, m);
            expect(answer.status, answer.text).toBeGreaterThanOrEqual(400);
            expect(answer.status, answer.text).toBeLessThan(500);
            expect(typeof (parseExact(answer.text) as { error?: unknown }).error).toBe("string");
            expect(await state(p)).toBe(before);
          }
          expect(await heldBlocks(p)).toEqual([...m.held].sort((a, b) => a - b));
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );
});

function isValid(s: Valid | Hostile): s is Valid {
  return s.kind === "store" || s.kind === "remove" || s.kind === "epoch";
}

/** A call no rule accepts: each kind breaks a valid call in one way that must be refused. */
function hostileCall(p: Partition, s: Hostile, m: Model) {
  if (s.kind === "bytes") return postKv(p, { workerId: 1n, seq: m.nextSeq ?? 0, epoch: m.epoch }, s.bytes);
  const c = callOf(s.base, m);
  // A continuing seq, so that only the break can refuse it (a gap would be a 409 anyway).
  const call = { workerId: 1n, seq: m.nextSeq ?? c.seq, epoch: m.epoch };
  switch (s.kind) {
    case "cut":
      return postKv(p, call, c.bytes.subarray(0, Math.min(s.keep, c.bytes.length - 1)));
    case "flip": {
      const bytes = c.bytes.slice();
      bytes[s.at] = s.value;
      return postKv(p, call, bytes);
    }
    case "header":
      return postKv(p, { ...call, headers: { [s.name]: s.value } }, c.bytes);
    case "query": {
      const query = `model_name=${p.model}&worker_id=${encodeURIComponent(s.worker)}`;
      return send("POST", `/kv_events?${query}`, {
        body: c.bytes,
        headers: {
          "content-type": "application/msgpack",
          "x-kv-event-seq": String(call.seq),
          "x-kv-event-epoch": m.epoch,
        },
      });
    }
    case "type":
      return postKv(p, { ...call, headers: { "content-type": s.type } }, c.bytes);
  }
}
