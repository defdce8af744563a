import { decode, encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { call, expectOk, get, itBooking, post, SeededTracker, uniqueModel } from "./api-http";

const U64_MAX = 18446744073709551615n;
const ABOVE_2_53 = 9007199254740993n;
const MSGPACK = "application/msgpack";
/** As the Worker must: int64/uint64 are bigint, so nothing above 2^53 is rounded on either side. */
const OPTIONS = { useBigInt64: true } as const;

type MsgpackType = "application/msgpack" | "application/x-msgpack";

function send(
  path: string,
  body: unknown,
  options: { type?: MsgpackType; accept?: string | null } = {},
): Promise<Response> {
  const { type = MSGPACK, accept = MSGPACK } = options;
  const headers: Record<string, string> = { "content-type": type };
  if (accept !== null) headers.accept = accept;
  return call("POST", path, { body: encode(body, OPTIONS), headers });
}

/** Status and decoded MessagePack body of an answer that must be MessagePack. */
async function unpack(res: Response | Promise<Response>): Promise<{ status: number; body: unknown }> {
  const response = await res;
  const bytes = new Uint8Array(await response.arrayBuffer());
  expect(response.headers.get("content-type")).toBe(MSGPACK);
  return { status: response.status, body: decode(bytes, OPTIONS) };
}

const OK = { status: "ok" };

function listing(path: "/workers" | "/loads", query: Record<string, string>, accept = MSGPACK) {
  return unpack(get(path, query, { accept }));
}

describe("MessagePack bodies and answers", () => {
  itBooking("runs the whole API in MessagePack, 64-bit worker ids as uint64 bigints", async () => {
    const model = uniqueModel();
    const scope = { model_name: model };
    expect(
      await unpack(
        send("/register", { ...scope, worker_id: U64_MAX, block_size: 16, dp_start: 0, dp_size: 2 }),
      ),
    ).toEqual({ status: 201, body: OK });
    expect(
      await unpack(
        send("/register", { ...scope, worker_id: ABOVE_2_53, block_size: 16, dp_start: 5, dp_size: 1 }),
      ),
    ).toEqual({ status: 201, body: OK });
    expect(
      await unpack(
        send("/add", {
          ...scope,
          request_id: "a",
          worker_id: ABOVE_2_53,
          dp_rank: 5,
          sequence_hashes: [1n, 2n, 3n],
          new_isl_tokens: 8,
        }),
      ),
    ).toEqual({ status: 201, body: OK });
    expect(
      await unpack(
        send("/add", {
          ...scope,
          request_id: "b",
          worker_id: U64_MAX,
          dp_rank: 1,
          sequence_hashes: [7],
          new_isl_tokens: 2,
        }),
      ),
    ).toEqual({ status: 201, body: OK });

    const query = { model_name: model, tenant_id: "default" };
    expect(await listing("/workers", query)).toEqual({
      status: 200,
      body: [
        {
          worker_id: ABOVE_2_53,
          model_name: model,
          tenant_id: "default",
          block_size: 16,
          dp_start: 5,
          dp_size: 1,
        },
        {
          worker_id: U64_MAX,
          model_name: model,
          tenant_id: "default",
          block_size: 16,
          dp_start: 0,
          dp_size: 2,
        },
      ],
    });
    const row = (workerId: bigint, dpRank: number, prefill: number, blocks: number) => ({
      model_name: model,
      tenant_id: "default",
      worker_id: workerId,
      dp_rank: dpRank,
      active_prefill_tokens: prefill,
      active_decode_blocks: blocks,
    });
    expect(await listing("/loads", query)).toEqual({
      status: 200,
      body: [row(ABOVE_2_53, 5, 8, 3), row(U64_MAX, 0, 0, 0), row(U64_MAX, 1, 2, 1)],
    });
    expect(
      await unpack(send("/potential_loads", { ...scope, sequence_hashes: [1n, 2n, 4n], new_isl_tokens: 5 })),
    ).toEqual({
      status: 200,
      body: [
        {
          worker_id: ABOVE_2_53,
          dp_rank: 5,
          potential_prefill_tokens: 13,
          potential_decode_blocks: 4,
          active_requests: 1,
        },
        {
          worker_id: U64_MAX,
          dp_rank: 0,
          potential_prefill_tokens: 5,
          potential_decode_blocks: 3,
          active_requests: 0,
        },
        {
          worker_id: U64_MAX,
          dp_rank: 1,
          potential_prefill_tokens: 7,
          potential_decode_blocks: 4,
          active_requests: 1,
        },
      ],
    });
    expect(await unpack(send("/prefill_complete", { ...scope, request_id: "a" }))).toEqual({
      status: 200,
      body: OK,
    });
    expect(await unpack(send("/free", { ...scope, request_id: "b" }))).toEqual({ status: 200, body: OK });
    expect(await listing("/loads", query)).toEqual({
      status: 200,
      body: [row(ABOVE_2_53, 5, 0, 3), row(U64_MAX, 0, 0, 0), row(U64_MAX, 1, 0, 0)],
    });
    expect(await unpack(send("/unregister", { ...scope, worker_id: U64_MAX }))).toEqual({
      status: 200,
      body: OK,
    });
    expect(await unpack(send("/unregister", { ...scope, worker_id: U64_MAX }))).toEqual({
      status: 404,
      body: { error: `worker 18446744073709551615 not found for model=${model} tenant=default` },
    });
  });

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

  itBooking(
    "accepts application/x-msgpack bodies, and answers JSON unless Accept asks for MessagePack",
    async () => {
      const model = uniqueModel();
      const scope = { model_name: model };
      const registered = await send(
        "/register",
        { ...scope, worker_id: 3, block_size: 32, dp_start: 1, dp_size: 1 },
        { type: "application/x-msgpack", accept: null },
      );
      expect(registered.status).toBe(201);
      expect(registered.headers.get("content-type")).toBe("application/json");
      expect(await registered.text()).toBe('{"status":"ok"}');
      expect(
        await unpack(
          send(
            "/add",
            {
              ...scope,
              request_id: "r",
              worker_id: 3,
              dp_rank: 1,
              sequence_hashes: [U64_MAX],
              new_isl_tokens: 1,
            },
            { type: "application/x-msgpack", accept: "application/x-msgpack" },
          ),
        ),
      ).toEqual({ status: 201, body: OK });
      const json = await get("/loads", { model_name: model }, { accept: "application/json" });
      expect(json.headers.get("content-type")).toBe("application/json");
      expect(await json.text()).toBe(
        `[{"model_name":"${model}","tenant_id":"default","worker_id":3,"dp_rank":1,"active_prefill_tokens":1,"active_decode_blocks":1}]`,
      );
      // A quality of zero refuses MessagePack; a list with it preferred chooses it.
      const refused = await get(
        "/workers",
        { model_name: model },
        { accept: "application/msgpack;q=0, */*" },
      );
      expect(refused.headers.get("content-type")).toBe("application/json");
      expect(
        await listing("/workers", { model_name: model }, "application/json;q=0.5, application/msgpack"),
      ).toEqual({
        status: 200,
        body: [
          { worker_id: 3n, model_name: model, tenant_id: "default", block_size: 32, dp_start: 1, dp_size: 1 },
        ],
      });
    },
  );

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

  itBooking("answers errors as MessagePack {error} when Accept asks for it", async () => {
    const model = uniqueModel();
    expect(
      await unpack(
        send("/add", { model_name: model, request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [] }),
      ),
    ).toEqual({ status: 404, body: { error: `no slot tracker for model=${model} tenant=default` } });
    expect(await unpack(call("GET", "/nope", { headers: { accept: MSGPACK } }))).toEqual({
      status: 404,
      body: { error: "route not found" },
    });
    expect(await unpack(call("GET", "/add", { headers: { accept: MSGPACK } }))).toEqual({
      status: 405,
      body: { error: "method not allowed" },
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
