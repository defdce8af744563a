import { decode } from "@msgpack/msgpack";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AddEvent, ReplicaEvent } from "../../durable-objects/core/replica/events";
import {
  decodeBatch,
  decodeEvent,
  encodeBatch,
  encodeBatchFromEncoded,
  encodeEvent,
  routerIdOf,
} from "../../durable-objects/replication/event-codec";
import { arbitraryBatch } from "./event-codec-arbitraries";

const U64_MAX = 2n ** 64n - 1n;
const key = { ts: 1_780_000_000_000 * 1024 + 5, origin: "weur" };
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
/** Hex of a string's ASCII bytes, to spell out the reference's byte listings. */
const s = (text: string) => Buffer.from(text, "ascii").toString("hex");

function add(overrides: Partial<AddEvent> = {}): AddEvent {
  return {
    ...key,
    type: "add",
    requestId: "req-1",
    workerId: 7n,
    dpRank: 0,
    hashes: new BigUint64Array([1n, 2n, U64_MAX]),
    newIslTokens: 8,
    startedAt: 1_780_000_000_000,
    deadline: 1_780_000_300_000,
    ...overrides,
  };
}

const everyKind: ReplicaEvent[] = [
  add(),
  add({
    expectedOutputTokens: 0,
    expectedPrefillDurationMs: 1500,
    newIslTokens: 0,
    hashes: new BigUint64Array(),
  }),
  { ...key, type: "register", workerId: U64_MAX, blockSize: 16, dpStart: 0, dpSize: 1 },
  {
    ...key,
    type: "register",
    workerId: 0n,
    blockSize: 64,
    dpStart: 2 ** 32 - 2,
    dpSize: 1,
    workerType: "prefill",
    routerConfig: {
      routerMode: "kv",
      overlapScoreWeight: 0.5,
      routerTemperature: 0,
      sessionAffinityTtlSecs: 600,
    },
  },
  {
    ...key,
    type: "register",
    workerId: 3n,
    blockSize: 1,
    dpStart: 1,
    dpSize: 4,
    routerConfig: { routerMode: "random" },
  },
  { ...key, type: "unregister", workerId: U64_MAX },
  { ...key, type: "prefill_complete", requestId: "req-1" },
  { ...key, type: "free", requestId: "\ufeffünïcødé ✓ 🚀" },
  {
    ...key,
    type: "catalog_upsert",
    workerId: U64_MAX,
    fields: {
      workerId: U64_MAX,
      model: "llama",
      tenant: "default",
      endpoint: "http://w:8000",
      kvEventsEndpoints: new Map([
        [0, "tcp://w:5557"],
        [1, "tcp://w:5558"],
      ]),
      blockSize: 16,
      dpStart: 0,
      dpSize: 2,
      maxNumBatchedTokens: 8192n,
      totalKvBlocks: U64_MAX,
      isEagle: false,
      taints: ["gpu:h100", "zone:a"],
      topologyDomains: new Map([["zone", "us-east-1a"]]),
      kvTransferEnforcement: "preferred",
      kvTransferPreferredWeight: 0.5,
      routerHintSourceControlEndpoints: new Map(),
    },
    candidacy: { ts: 5, origin: "enam" },
    agreed: true,
    keeps: { start: 0, end: 2 },
    floors: [{ start: 1, end: 2, key: { ts: 4, origin: "apac" } }],
  },
  {
    ...key,
    type: "catalog_upsert",
    workerId: 7n,
    fields: {
      workerId: 7n,
      model: "m",
      tenant: "t",
      kvEventsEndpoints: new Map(),
      taints: [],
      topologyDomains: new Map(),
      routerHintSourceControlEndpoints: new Map(),
    },
    candidacy: key,
    agreed: false,
    floors: [],
  },
  { ...key, type: "catalog_remove", workerId: 7n },
  add({ owner: "frontend-7", grant: { at: 1_780_000_000_000, deadline: 1_780_000_030_000 } }),
  { ...key, type: "lease", owner: "frontend-7", at: 1_780_000_000_000, deadline: 1_780_000_030_000 },
  { ...key, type: "lease_cut", owner: "frontend-7", at: 1_780_000_030_000 },
  {
    ...key,
    type: "bind",
    sessionId: "chat-7",
    hop: "prefill",
    workerId: U64_MAX,
    dpRank: 3,
    expiresAt: 1_780_000_600_000,
  },
];

/** The bytes of the add event's token_sequence value (its key is followed by the array). */
function tokenBytes(bytes: Uint8Array): string {
  const h = hex(bytes);
  const start = h.indexOf(s("token_sequence")) + s("token_sequence").length;
  return h.slice(start, h.indexOf(s("track_prefill_tokens")) - 2);
}

describe("event codec round trips", () => {
  it("decodes every event kind to an object equal to the one encoded, with no undefined keys", () => {
    for (const event of everyKind) {
      const decoded = decodeEvent(encodeEvent(event));
      expect(decoded).toStrictEqual(event);
      for (const value of Object.values(decoded)) expect(value).not.toBeUndefined();
    }
    const minimal = decodeEvent(encodeEvent(add())) as AddEvent;
    expect("expectedOutputTokens" in minimal).toBe(false);
    expect("expectedPrefillDurationMs" in minimal).toBe(false);
  });

  it("treats optional keys set to undefined as absent", () => {
    const event = add({ expectedOutputTokens: undefined, expectedPrefillDurationMs: undefined });
    expect(encodeEvent(event)).toEqual(encodeEvent(add()));
    expect(Object.keys(decodeEvent(encodeEvent(event)))).not.toContain("expectedOutputTokens");
  });

  it("carries a selection booking's cache prompt, its absence and its null apart", () => {
    const blockHashes = BigUint64Array.from([1n, 2n ** 63n, 2n ** 64n - 1n]);
    const sequenceHashes = BigUint64Array.from([1n, 5n, 9n]);
    for (const cachePrompt of [{ blockHashes }, { blockHashes, sequenceHashes }, null]) {
      const decoded = decodeEvent(encodeEvent(add({ cachePrompt }))) as AddEvent;
      expect(decoded.cachePrompt).toStrictEqual(cachePrompt);
    }
    expect("cachePrompt" in decodeEvent(encodeEvent(add()))).toBe(false);
    expect(encodeEvent(add({ cachePrompt: undefined }))).toEqual(encodeEvent(add()));
  });

  it("carries an owned booking's owner and grant, and leaves an unowned add's bytes as they were", () => {
    const owner = "\ufefffrontend-ünï ✓ 🚀";
    const grant = { at: Number.MAX_SAFE_INTEGER - 1, deadline: Number.MAX_SAFE_INTEGER };
    const blockHashes = BigUint64Array.from([3n, U64_MAX]);
    for (const extra of [{}, { cachePrompt: { blockHashes } }, { cachePrompt: null }]) {
      const event = add({ ...extra, owner, grant });
      const bytes = encodeEvent(event);
      expect(decodeEvent(bytes)).toStrictEqual(event);
      // Two more keys than the same add unowned, in the map's header.
      expect(bytes[0]).toBe(encodeEvent(add(extra))[0]! + 2);
      const plain = decode(bytes, { useBigInt64: true }) as Record<string, unknown>;
      expect([plain.owner, plain.grant]).toEqual([
        owner,
        { at: BigInt(grant.at), deadline: BigInt(grant.deadline) },
      ]);
    }
    // Unowned: the layout of before leases, and no owner or grant key once decoded.
    expect(encodeEvent(add({ owner: undefined, grant: undefined }))).toEqual(encodeEvent(add()));
    const unowned = decodeEvent(encodeEvent(add()));
    expect(["owner" in unowned, "grant" in unowned]).toEqual([false, false]);
    expect(decodeEvent(encodeEvent(add({ owner: "", grant: { at: 0, deadline: 0 } })))).toMatchObject({
      owner: "",
      grant: { at: 0, deadline: 0 },
    });
  });

  it("carries lease grants and cuts as this tracker's own variants, owner strings and ms exact", () => {
    const owner = "\u{1f680}frontend/é-01";
    const events: ReplicaEvent[] = [
      { ...key, type: "lease", owner, at: 2 ** 40, deadline: Number.MAX_SAFE_INTEGER },
      { ...key, type: "lease", owner: "", at: 0, deadline: 1 },
      { ...key, type: "lease_cut", owner, at: Number.MAX_SAFE_INTEGER },
    ];
    for (const event of events) expect(decodeEvent(encodeEvent(event))).toStrictEqual(event);
    const plain = decode(encodeEvent(events[0]!), { useBigInt64: true }) as Record<string, unknown>;
    expect([plain.request_id, plain.worker, plain.data]).toEqual([
      "",
      { worker_id: 0, dp_rank: 0 },
      { LeaseGrant: { owner, at: BigInt(2 ** 40), deadline: BigInt(Number.MAX_SAFE_INTEGER) } },
    ]);
    const cut = decode(encodeEvent(events[2]!), { useBigInt64: true }) as Record<string, unknown>;
    expect(cut.data).toEqual({ LeaseCut: { owner, at: BigInt(Number.MAX_SAFE_INTEGER) } });
  });

  it("writes hashes in rmp_serde's smallest integer forms and reads them back exactly", () => {
    const values = [
      0n,
      1n,
      127n,
      128n,
      255n,
      256n,
      65_535n,
      65_536n,
      2n ** 32n - 1n,
      2n ** 32n,
      2n ** 63n,
      U64_MAX,
    ];
    const event = add({ hashes: BigUint64Array.from(values), workerId: U64_MAX });
    const bytes = encodeEvent(event);
    expect(tokenBytes(bytes)).toBe(
      "9c" +
        ["00", "01", "7f", "cc80", "ccff", "cd0100", "cdffff", "ce00010000", "ceffffffff"].join("") +
        ["cf0000000100000000", "cf8000000000000000", "cfffffffffffffffff"].join(""),
    );
    expect(decodeEvent(bytes)).toStrictEqual(event);
  });

  it("round-trips a prompt of 65,536 hashes and a prompt that is a view into a larger buffer", () => {
    const big = new BigUint64Array(65_536).map((_, i) => (BigInt(i) * 0x9e37_79b9_7f4a_7c15n) & U64_MAX);
    const event = add({ hashes: big });
    expect((decodeEvent(encodeEvent(event)) as AddEvent).hashes).toStrictEqual(big);
    const view = add({ hashes: big.subarray(3, 7) });
    expect((decodeEvent(encodeEvent(view)) as AddEvent).hashes).toStrictEqual(big.slice(3, 7));
  });

  it("carries durations as Rust's {secs, nanos}: exact for whole ms, to the nanosecond for fractions", () => {
    const bytes = encodeEvent(add({ expectedPrefillDurationMs: 1500 }));
    expect(hex(bytes)).toContain(
      `${s("expected_prefill_duration")}82a4${s("secs")}01a5${s("nanos")}ce1dcd6500`,
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (ms) => {
        const back = decodeEvent(encodeEvent(add({ expectedPrefillDurationMs: ms }))) as AddEvent;
        expect(back.expectedPrefillDurationMs).toBe(ms);
      }),
    );
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e12, noNaN: true }), (ms) => {
        const back = (decodeEvent(encodeEvent(add({ expectedPrefillDurationMs: ms }))) as AddEvent)
          .expectedPrefillDurationMs!;
        expect(Math.abs(back - ms)).toBeLessThanOrEqual(5e-7 + ms * Number.EPSILON);
      }),
    );
  });

  it("writes the clock and epoch ms as unsigned integers in their smallest form", () => {
    const bytes = encodeEvent({ ts: 2 ** 51, origin: "o", type: "free", requestId: "r" });
    expect(hex(bytes).endsWith(`${s("clock")}cf0008000000000000`)).toBe(true);
    const small = encodeEvent({ ts: 200, origin: "o", type: "free", requestId: "r" });
    expect(hex(small).endsWith(`${s("clock")}ccc8`)).toBe(true);
  });

  it("round-trips arbitrary events and batches, spliced or not, to the same bytes", () => {
    fc.assert(
      fc.property(arbitraryBatch(), (b) => {
        const bytes = encodeBatch(b);
        expect(decodeBatch(bytes)).toStrictEqual(b);
        const { events, ...header } = b;
        expect(encodeBatchFromEncoded(header, events.map(encodeEvent))).toEqual(bytes);
        for (const e of events) expect(decodeEvent(encodeEvent(e))).toStrictEqual(e);
      }),
      { numRuns: 120 },
    );
  });

  it("keeps every encoded event's bytes intact while later events fill slab after slab", () => {
    // ~3.6 MB of encodings (9 bytes a hash), more than any slab an earlier test left: each must
    // still read back as encoded at the end.
    const events = Array.from({ length: 400 }, (_, i) =>
      add({ requestId: `req-${i}`, hashes: new BigUint64Array(1000).fill(U64_MAX - BigInt(i)) }),
    );
    const encoded = events.map((event) => {
      const bytes = encodeEvent(event);
      return { bytes, copy: bytes.slice() };
    });
    expect(encoded[0]!.bytes.buffer).not.toBe(encoded[399]!.bytes.buffer);
    const changed = encoded.filter(({ bytes, copy }) => Buffer.compare(bytes, copy) !== 0);
    expect(changed.length).toBe(0);
    const decoded = encoded.map(({ bytes }) => decodeEvent(bytes) as AddEvent);
    expect(decoded.map((e) => [e.requestId, e.hashes[999]])).toEqual(
      events.map((e) => [e.requestId, e.hashes[999]]),
    );
  });

  it("encodes the same event twice in a row once, and an equal event anew to the same bytes", () => {
    const event: ReplicaEvent = { ...key, type: "free", requestId: "req-9" };
    const first = encodeEvent(event);
    expect(encodeEvent(event)).toBe(first);
    const again = encodeEvent({ ...event });
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    expect(encodeEvent({ ...event, requestId: "req-10" })).not.toEqual(first);
  });
});

describe("event codec layout", () => {
  it("decodes with @msgpack/msgpack into Dynamo's ActiveSequenceEvent names and nesting", () => {
    const bytes = encodeEvent(add({ expectedOutputTokens: 32, expectedPrefillDurationMs: 250 }));
    expect(decode(bytes, { useBigInt64: true })).toEqual({
      request_id: "req-1",
      worker: { worker_id: 7, dp_rank: 0 },
      data: {
        AddRequest: {
          token_sequence: [1, 2, U64_MAX],
          track_prefill_tokens: true,
          expected_output_tokens: 32,
          prefill_load_hint: {
            initial_effective_prefill_tokens: 8,
            expected_prefill_duration: { secs: 0, nanos: 250_000_000 },
          },
        },
      },
      router_id: routerIdOf("weur"),
      lora_name: null,
      origin: "weur",
      clock: BigInt(key.ts),
      started_at: BigInt(1_780_000_000_000),
      deadline: BigInt(1_780_000_300_000),
    });
    const batch = decode(encodeBatch({ ...header(), events: [add()] }), { useBigInt64: true });
    expect(Object.keys(batch as object)).toEqual([
      "origin",
      "incarnation",
      "kind",
      "first_seq",
      "up_to",
      "final",
      "events",
    ]);
  });

  it("writes the reference's hand-built AddRequest bytes up to router_id's value (§5.5)", () => {
    const reference = Buffer.from(
      [
        "85",
        `aa${s("request_id")}a5${s("req-1")}`,
        `a6${s("worker")}82a9${s("worker_id")}07a7${s("dp_rank")}00`,
        `a4${s("data")}81aa${s("AddRequest")}84`,
        `ae${s("token_sequence")}930102cfffffffffffffffff`,
        `b4${s("track_prefill_tokens")}c3`,
        `b6${s("expected_output_tokens")}c0`,
        `b1${s("prefill_load_hint")}82`,
        `d920${s("initial_effective_prefill_tokens")}08`,
        `b9${s("expected_prefill_duration")}c0`,
        `a9${s("router_id")}2a`,
        `a9${s("lora_name")}c0`,
      ].join(""),
      "hex",
    );
    expect(reference.length).toBe(240);
    const ours = encodeEvent(add());
    const routerIdAt = reference.length - 1 - (1 + 9) - 1;
    // Our map has our four extra fields: 0x89 where the reference has 0x85.
    expect([ours[0], reference[0]]).toEqual([0x89, 0x85]);
    expect(hex(ours.subarray(1, routerIdAt))).toBe(hex(reference.subarray(1, routerIdAt)));
    const id = routerIdOf("weur");
    expect(hex(ours.subarray(routerIdAt, routerIdAt + 9))).toBe(`cf${id.toString(16).padStart(16, "0")}`);
    expect(hex(ours.subarray(routerIdAt + 9, routerIdAt + 20))).toBe(hex(reference.subarray(routerIdAt + 1)));
  });

  it("derives router_id as FNV-1a 64 of the origin name", () => {
    expect(routerIdOf("")).toBe(0xcbf2_9ce4_8422_2325n);
    expect(routerIdOf("a")).toBe(0xaf63_dc4c_8601_ec8cn);
    expect(routerIdOf("foobar")).toBe(0x8594_4171_f739_67e8n);
  });
});

function header() {
  return { origin: "weur", incarnation: "i-1", kind: "stream" as const, firstSeq: 1, upTo: 0, final: false };
}
