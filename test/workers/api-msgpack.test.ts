/**
 * The API in MessagePack: every route accepts a MessagePack body and answers in MessagePack when Accept
 * asks for it (`application/msgpack` or `application/x-msgpack`, with quality values), JSON otherwise;
 * errors too. 64-bit worker ids travel as uint64 bigints.
 */
import { describe, expect } from "vitest";
import { call, get, itBooking, uniqueModel } from "./api-http";
import { ABOVE_2_53, U64_MAX } from "./api-rows";
import { listing, MSGPACK, OK, send, unpack } from "./msgpack-http";

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
});
