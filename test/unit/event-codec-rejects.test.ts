import { decode, encode } from "@msgpack/msgpack";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AddEvent } from "../../durable-objects/core/replica/events";
import {
  CodecError,
  decodeBatch,
  decodeEvent,
  encodeBatch,
  encodeEvent,
} from "../../durable-objects/replication/event-codec";

const U64_MAX = 2n ** 64n - 1n;
const event: AddEvent = {
  ts: 1_780_000_000_000 * 1024,
  origin: "weur",
  type: "add",
  requestId: "req-1",
  workerId: 7n,
  dpRank: 1,
  hashes: new BigUint64Array([1n, 2n ** 40n, U64_MAX]),
  newIslTokens: 300,
  expectedOutputTokens: 20,
  expectedPrefillDurationMs: 1234.5,
  startedAt: 1_780_000_000_000,
  deadline: 1_780_000_300_000,
};
const bytes = encodeEvent(event);
const batchBytes = encodeBatch({
  origin: "weur",
  incarnation: "i-1",
  kind: "snapshot",
  firstSeq: 0,
  upTo: 70_000,
  final: true,
  events: [event, { ts: 9, origin: "enam", type: "free", requestId: "x" }],
});

type Json = { [key: string]: unknown };
/**
 * The event as a plain map with `top` fields and AddRequest `fields` replaced (undefined: removed),
 * re-encoded by @msgpack/msgpack; keys keep their order.
 */
function edited(top: Json, fields: Json = {}): Uint8Array {
  const map = decode(bytes, { useBigInt64: true }) as Json & { data: { AddRequest: Json } };
  const data = { AddRequest: { ...map.data.AddRequest, ...fields } };
  return encode({ ...map, data, ...top }, { useBigInt64: true, ignoreUndefined: true });
}

/** The event's bytes with one more field, `z`, whose value is the raw bytes given. */
function withRawField(...value: number[]): Uint8Array {
  return Uint8Array.of(bytes[0]! + 1, ...bytes.subarray(1), 0xa1, 0x7a, ...value);
}

function rejects(
  input: Uint8Array,
  message: RegExp,
  decoder: (b: Uint8Array) => unknown = decodeEvent,
): void {
  expect(() => decoder(input)).toThrow(CodecError);
  expect(() => decoder(input)).toThrow(message);
}

describe("event decoder rejects what it cannot accept", () => {
  it("throws on every truncation of an event and of a batch, and on trailing bytes", () => {
    for (let n = 0; n < bytes.length; n++) rejects(bytes.subarray(0, n), /truncated|expected/);
    for (let n = 0; n < batchBytes.length; n++)
      rejects(batchBytes.subarray(0, n), /truncated|expected/, decodeBatch);
    rejects(Uint8Array.of(...bytes, 0xc0), /input: expected its end/);
  });

  it("names the field whose value has the wrong type or range", () => {
    rejects(edited({ request_id: 5 }), /request_id: expected a string/);
    rejects(edited({ worker: { worker_id: "7", dp_rank: 0 } }), /worker.worker_id: expected an unsigned/);
    rejects(edited({ worker: { worker_id: -1, dp_rank: 0 } }), /worker.worker_id: expected an unsigned/);
    rejects(edited({ worker: { worker_id: 7, dp_rank: 2n ** 32n } }), /dp_rank: expected an integer up to/);
    rejects(edited({ clock: 2n ** 53n }), /clock: expected an integer up to 9007199254740991/);
    rejects(edited({ clock: 1.5 }), /clock: expected an unsigned integer/);
    rejects(edited({}, { token_sequence: [1, 0.5] }), /token_sequence: expected an integer/);
    rejects(edited({}, { token_sequence: "1,2" }), /token_sequence: expected an array/);
    rejects(edited({}, { track_prefill_tokens: 1 }), /track_prefill_tokens: expected a bool/);
    rejects(edited({ worker: [7, 0] }), /worker: expected a map/);
  });

  it("rejects unknown variants and a data map of more than one variant", () => {
    rejects(edited({ data: "Bogus" }), /data: expected a known variant/);
    rejects(edited({ data: { Bogus: {} } }), /data: expected AddRequest(,| or) RegisterWorker/);
    rejects(edited({ data: { AddRequest: {}, Free: null } }), /data: expected a map of one variant/);
    rejects(
      edited({ data: { RegisterWorker: { block_size: 1, dp_start: 0, dp_size: 1, worker_type: "x" } } }),
      /worker_type: expected decode \| prefill/,
    );
    const batch = decode(batchBytes) as Json;
    rejects(encode({ ...batch, kind: "other" }), /kind: expected stream \| snapshot/, decodeBatch);
  });

  it("rejects missing required fields and repeated keys", () => {
    rejects(edited({ clock: undefined }), /event lacks one of/);
    rejects(edited({ deadline: undefined }), /AddRequest event lacks one of started_at, deadline/);
    rejects(edited({}, { token_sequence: undefined }), /AddRequest lacks one of token_sequence/);
    const { events: _, ...header } = decode(batchBytes) as Json;
    rejects(encode(header), /batch: expected origin, incarnation/, decodeBatch);
    const twice = Uint8Array.of(
      0x82,
      0xa6,
      ...Buffer.from("origin"),
      0xa1,
      0x61,
      0xa6,
      ...Buffer.from("origin"),
      0xa1,
      0x62,
    );
    rejects(twice, /event: expected no repeated key "origin"/);
  });

  it("rejects malformed lease events and an owned add missing half of its ownership", () => {
    // Bigints: @msgpack/msgpack writes numbers past 32 bits as floats when it writes bigints as ints.
    const grant = { owner: "fe-1", at: 1_780_000_000_000n, deadline: 1_780_000_030_000n };
    const lease = (data: Json) => edited({ request_id: "", worker: { worker_id: 0, dp_rank: 0 }, data });
    expect(decodeEvent(lease({ LeaseGrant: grant }))).toMatchObject({
      type: "lease",
      owner: "fe-1",
      at: 1_780_000_000_000,
      deadline: 1_780_000_030_000,
    });
    rejects(
      lease({ LeaseGrant: { ...grant, owner: undefined } }),
      /LeaseGrant lacks one of owner, at, deadline/,
    );
    rejects(lease({ LeaseGrant: { ...grant, deadline: undefined } }), /LeaseGrant lacks one of owner/);
    rejects(lease({ LeaseCut: { at: 5 } }), /LeaseCut lacks one of owner, at/);
    rejects(lease({ LeaseCut: { owner: "fe-1" } }), /LeaseCut lacks one of owner, at/);
    rejects(lease({ LeaseGrant: { ...grant, at: 1.5 } }), /at: expected an unsigned integer/);
    rejects(lease({ LeaseGrant: { ...grant, deadline: -1 } }), /deadline: expected an unsigned integer/);
    rejects(lease({ LeaseGrant: { ...grant, at: 2n ** 53n } }), /at: expected an integer up to/);
    rejects(lease({ LeaseCut: { owner: 7, at: 5 } }), /owner: expected a string/);
    rejects(lease({ LeaseCut: "fe-1" }), /LeaseCut: expected a map/);
    rejects(edited({ data: "LeaseCut" }), /data: expected a known variant/);
    // A cut's unknown keys are skipped like any (a deadline is not one of its fields).
    expect(decodeEvent(lease({ LeaseCut: { owner: "fe-1", at: 5, deadline: 9 } }))).toMatchObject({
      type: "lease_cut",
      owner: "fe-1",
      at: 5,
    });

    const at = { at: 1, deadline: 2 };
    expect(decodeEvent(edited({ owner: "fe-1", grant: at }))).toMatchObject({ owner: "fe-1", grant: at });
    rejects(edited({ owner: "fe-1" }), /owned AddRequest event lacks one of owner, grant/);
    rejects(edited({ grant: at }), /owned AddRequest event lacks one of owner, grant/);
    rejects(edited({ owner: "fe-1", grant: { at: 1 } }), /grant lacks one of at, deadline/);
    rejects(edited({ owner: "fe-1", grant: { at: 0.5, deadline: 2 } }), /grant.at: expected an unsigned/);
    rejects(edited({ owner: null, grant: at }), /owner: expected a string/);
  });

  it("skips fields it does not know, but no deeper than 8 levels", () => {
    const future = { list: [1, "two", { three: [null, true, 2.5] }], bin: new Uint8Array(3) };
    expect(decodeEvent(edited({ stride: 4, future }))).toStrictEqual(event);
    const deep = (n: number): unknown => (n === 0 ? 1 : [deep(n - 1)]);
    expect(decodeEvent(edited({ stride: deep(8) }))).toStrictEqual(event);
    rejects(edited({ stride: deep(9) }), /expected nesting at most 8 deep/);
    rejects(withRawField(0xc1), /z: expected a value this codec knows/);
    rejects(withRawField(0xd4, 0x01, 0x00), /z: expected a value this codec knows \(no extension types\)/);
  });

  it("reads negative integer forms in token_sequence as the bits of an i64", () => {
    const hashes = [-1, -2n, -128, -32_768, -(2 ** 31), 0x7fn];
    const back = decodeEvent(edited({}, { token_sequence: hashes })) as AddEvent;
    expect([...back.hashes]).toEqual(hashes.map((h) => BigInt.asUintN(64, BigInt(h))));
  });

  it("fails fast on a bogus length without allocating for it", () => {
    const header = [0x93, 0x01, 0xcf];
    const at = bytes.findIndex((_, i) => header.every((b, j) => bytes[i + j] === b));
    const bogus = (...h: number[]) =>
      Uint8Array.of(...bytes.subarray(0, at), ...h, ...bytes.subarray(at + 1));
    rejects(bogus(0xdd, 0xff, 0xff, 0xff, 0xff), /token_sequence: truncated/);
    rejects(
      Uint8Array.of(0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 0x78, 0xdd, 0xff, 0xff, 0xff, 0xff),
      /truncated/,
    );
    rejects(Uint8Array.of(0x81, 0xdb, 0xff, 0xff, 0xff, 0xff, 0x61), /event: truncated at byte 6/);
  });

  it("rejects invalid UTF-8", () => {
    const at = 13; // the "r" of "req-1", after 0x89, the key and the fixstr header
    expect(bytes[at]).toBe(0x72);
    rejects(
      Uint8Array.of(...bytes.subarray(0, at), 0xff, ...bytes.subarray(at + 1)),
      /request_id: invalid UTF-8/,
    );
  });

  it("throws only CodecError on corrupted batches, whatever the corruption", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(batchBytes.length - 1), fc.nat(255)), { minLength: 1, maxLength: 4 }),
        (edits) => {
          const corrupt = batchBytes.slice();
          for (const [i, b] of edits) corrupt[i] = b;
          try {
            decodeBatch(corrupt);
          } catch (err) {
            expect(err).toBeInstanceOf(CodecError);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("event encoder refuses values the wire cannot carry exactly", () => {
  it("throws on non-integer or out-of-range numbers and ids", () => {
    expect(() => encodeEvent({ ...event, ts: 1.5 })).toThrow(/ts must be a non-negative safe integer/);
    expect(() => encodeEvent({ ...event, startedAt: -1 })).toThrow(/startedAt/);
    expect(() => encodeEvent({ ...event, dpRank: 2 ** 32 })).toThrow(/dpRank must fit in a u32/);
    expect(() => encodeEvent({ ...event, workerId: 2n ** 64n })).toThrow(/workerId is not a u64/);
    expect(() => encodeEvent({ ...event, expectedPrefillDurationMs: Number.NaN })).toThrow(/finite and ≥ 0/);
    const lease = { ts: 1, origin: "o", owner: "fe-1", at: 1, deadline: 2 };
    expect(() => encodeEvent({ ...lease, type: "lease", at: 1.5 })).toThrow(/at must be a non-negative safe/);
    expect(() => encodeEvent({ ...lease, type: "lease", deadline: -1 })).toThrow(/deadline must be/);
    expect(() => encodeEvent({ ...lease, type: "lease_cut", at: 2 ** 53 })).toThrow(/at must be/);
    expect(() => encodeEvent({ ...event, owner: "fe-1" })).toThrow(/owner and grant go together/);
    expect(() => encodeEvent({ ...event, grant: { at: 1, deadline: 2 } })).toThrow(/owner and grant/);
    expect(() => encodeEvent({ ...event, owner: "fe-1", grant: { at: 1, deadline: 0.5 } })).toThrow(
      /grant.deadline must be/,
    );
  });
});
