/**
 * Integers in MessagePack bodies and answers: ids are written as uint64 exactly, hashes sent as int64
 * and uint64 are the same 64 bits, and malformed MessagePack (400) or out-of-range and inexact integers
 * (422) are refused without a change.
 */
import { decode, encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { call, expectOk, get, itBooking, post, SeededTracker, uniqueModel } from "./api-http";
import { ABOVE_2_53, U64_MAX } from "./api-rows";
import { listing, MSGPACK, OPTIONS, send, unpack } from "./msgpack-http";

describe("MessagePack bodies and answers", () => {
  it("writes the ids on the wire as uint64, exactly", async () => {
    const model = uniqueModel();
    await expectOk(
      post(
        "/register",
        `{"worker_id":9007199254740993,"model_name":"${model}","block_size":16,"dp_start":0,"dp_size":1}`,
      ),
      201,
    );
    const res = await get("/workers", { model_name: model }, { accept: MSGPACK });
    const bytes = new Uint8Array(await res.arrayBuffer());
    // 0xcf then 2^53 + 1 big-endian.
    const uint64 = [0xcf, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01];
    const at = bytes.findIndex((_b, i) => uint64.every((v, j) => bytes[i + j] === v));
    expect(at).toBeGreaterThan(0);
    expect((decode(bytes, OPTIONS) as { worker_id: unknown }[])[0]!.worker_id).toBe(ABOVE_2_53);
  });

  itBooking("treats hashes sent as int64 (negative) and uint64 as the same 64 bits", async () => {
    const model = uniqueModel();
    const scope = { model_name: model };
    await expectOk(
      send(
        "/register",
        { ...scope, worker_id: 1, block_size: 16, dp_start: 0, dp_size: 2 },
        { accept: null },
      ),
      201,
    );
    const signed = encode(
      {
        ...scope,
        request_id: "a",
        worker_id: 1,
        dp_rank: 0,
        sequence_hashes: [-1n, 5n, -9223372036854775808n],
      },
      OPTIONS,
    );
    // The body really carries int64 (0xd3) -1 and i64::MIN, not a shorter signed form.
    const asHex = Array.from(signed, (b) => b.toString(16).padStart(2, "0")).join("");
    expect(asHex).toContain("d3ffffffffffffffff");
    expect(asHex).toContain("d38000000000000000");
    const added = await call("POST", "/add", { body: signed, headers: { "content-type": MSGPACK } });
    await expectOk(added, 201);
    await expectOk(
      send(
        "/add",
        { ...scope, request_id: "b", worker_id: 1, dp_rank: 0, sequence_hashes: [U64_MAX, 6n] },
        { accept: null },
      ),
      201,
    );
    // Blocks 2^64−1, 5, 2^63 and 6: -1 and 2^64−1 count once.
    expect(await listing("/loads", { model_name: model })).toMatchObject({
      status: 200,
      body: [
        { dp_rank: 0, active_decode_blocks: 4 },
        { dp_rank: 1, active_decode_blocks: 0 },
      ],
    });
    // The query in uint64 matches the whole prompt sent in int64: no new block on rank 0.
    expect(
      await unpack(
        send("/potential_loads", { ...scope, sequence_hashes: [U64_MAX, 5n, 9223372036854775808n] }),
      ),
    ).toEqual({
      status: 200,
      body: [
        {
          worker_id: 1n,
          dp_rank: 0,
          potential_prefill_tokens: 0,
          potential_decode_blocks: 4,
          active_requests: 2,
        },
        {
          worker_id: 1n,
          dp_rank: 1,
          potential_prefill_tokens: 0,
          potential_decode_blocks: 3,
          active_requests: 0,
        },
      ],
    });
    // And the other way round, with a small negative fixint: -1 matches the prompt sent as uint64.
    expect(await unpack(send("/potential_loads", { ...scope, sequence_hashes: [-1, 6] }))).toMatchObject({
      status: 200,
      body: [
        { dp_rank: 0, potential_decode_blocks: 4 },
        { dp_rank: 1, potential_decode_blocks: 2 },
      ],
    });
  });

  itBooking(
    "rejects malformed MessagePack with 400 and out-of-range or inexact integers with 422, changing nothing",
    async () => {
      const t = await SeededTracker.create();
      // Valid, this add would book a third request on the seeded tracker.
      const valid = { model_name: t.model, request_id: "x", worker_id: 1, dp_rank: 0, sequence_hashes: [9] };
      const bytes = encode(valid, OPTIONS);
      const malformed: [string, Uint8Array][] = [
        ["truncated", bytes.slice(0, bytes.length - 3)],
        ["trailing byte", Uint8Array.of(...bytes, 0xc0)],
        ["never-used type 0xc1", Uint8Array.of(0xc1)],
        ["empty", new Uint8Array(0)],
        ["map claiming 2^32−1 entries", Uint8Array.of(0xdf, 0xff, 0xff, 0xff, 0xff)],
        ["timestamp extension", encode({ ...valid, request_id: new Date(0) })],
      ];
      for (const [label, body] of malformed) {
        await t.unchangedBy(label, async () => {
          const answer = await unpack(
            call("POST", "/add", { body, headers: { "content-type": MSGPACK, accept: MSGPACK } }),
          );
          expect(answer).toEqual({ status: 400, body: { error: expect.stringMatching(/MessagePack/) } });
        });
      }
      const wrong: [string, unknown][] = [
        ["worker_id", -1n],
        ["worker_id", 1.5],
        // 2^60 as float64: integral, but past 2^53 a float may already be rounded.
        ["worker_id", 2 ** 60],
        ["worker_id", "1"],
        ["dp_rank", 4294967296n],
        ["dp_rank", -1],
        ["dp_rank", 0.5],
        ["sequence_hashes", [1, 2.5]],
        ["sequence_hashes", 5],
        ["new_isl_tokens", -3],
        ["request_id", 7],
        ["request_id", new Uint8Array([0x78])],
      ];
      for (const [field, value] of wrong) {
        await t.unchangedBy(`${field}=${String(value)}`, async () => {
          const answer = await unpack(send("/add", { ...valid, [field]: value }));
          expect(answer).toEqual({ status: 422, body: { error: expect.stringContaining(field) } });
        });
      }
    },
  );
});
