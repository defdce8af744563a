/**
 * The selection API's booking routes over HTTP, against real tracker objects: answers in Dynamo's
 * shapes and field order with exact 64-bit values, statuses, and error texts.
 */
import { encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { body, jsonOf, range, schedule, selectionCall, selectionPost, uniquePartition } from "./booking-http";
import { send } from "./reliability-http";

const B_1_4 = 14643705804678351452n;

/** Token ids written as a long array of small integers (well over 64 characters of JSON). */
const LONG_PROMPT = Array.from({ length: 40 }, (_, i) => 100_000 + i);

describe("POST /selection/select and /selection/select_and_reserve", () => {
  it("selects without booking, in SelectResponse's field order", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 7n }]);
    const answer = await selectionPost("/select", body(p, { token_ids: range(1, 4) }));
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(
      `{"model_name":"${p.model}","routing_group":"default","worker_id":7,"dp_rank":0,"endpoint":"http://w7","block_size":4,` +
        `"overlap":{"longest_matched":0,"gpu":0,"dp":{"0":0},"cpu":0,"disk":0},"effective_prefill_tokens":4,"potential_decode_blocks":1}`,
    );
    const loads = jsonOf(
      await selectionCall("GET", `/loads?model_name=${p.model}`),
      200,
    ) as unknown as unknown[];
    expect(loads).toEqual([
      {
        model_name: p.model,
        routing_group: "default",
        loads: [
          {
            worker_id: 7,
            dp_rank: 0,
            potential_prefill_tokens: 0,
            potential_decode_blocks: 0,
            active_requests: 0,
          },
        ],
        pending_count: 0,
        pending_isl_tokens: 0,
      },
    ]);
  });

  it("chooses and books with select_and_reserve (200), answering the booking facts as i64", async () => {
    const p = uniquePartition();
    const big = 2n ** 64n - 1n;
    await schedule(p, [{ workerId: big }]);
    const answer = await selectionPost(
      "/select_and_reserve",
      body(p, { selection_id: "s-1", token_ids: range(1, 12) }),
    );
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(
      `{"selection_id":"s-1","sequence_hashes":[-3803038269031200164,4945711292740353085,-5863151826378895484],` +
        `"isl_tokens":12,"track_prefill_tokens":true,"model_name":"${p.model}","routing_group":"default",` +
        `"worker_id":18446744073709551615,"dp_rank":0,"endpoint":"http://w18446744073709551615","block_size":4,` +
        `"overlap":{"longest_matched":0,"gpu":0,"dp":{"0":0},"cpu":0,"disk":0},"effective_prefill_tokens":12,"potential_decode_blocks":3}`,
    );
    const again = await selectionPost(
      "/select_and_reserve",
      body(p, { selection_id: "s-1", token_ids: range(1, 4) }),
    );
    expect(jsonOf(again, 409)).toEqual({ error: "selection s-1 is already reserved or being reserved" });
  });

  it("gives a booking without a selection_id a UUID v4", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }]);
    const booked = jsonOf(
      await selectionPost("/select_and_reserve", body(p, { token_ids: range(1, 4) })),
      200,
    );
    expect(booked.selection_id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const freed = await selectionCall("DELETE", `/reservations/${booked.selection_id}`);
    expect(jsonOf(freed, 200)).toEqual({ status: "ok" });
  });

  it("takes trusted hashes as i64 and answers MessagePack when asked", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 3n }]);
    const answer = await send("POST", "/selection/select_and_reserve", {
      body: encode(
        body(p, {
          selection_id: "m",
          block_hashes: [BigInt.asIntN(64, B_1_4)],
          sequence_hashes: [-1n],
          isl_tokens: 4,
        }),
        { useBigInt64: true },
      ),
      headers: { "content-type": "application/msgpack", accept: "application/msgpack" },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/msgpack");
    const { decode } = await import("@msgpack/msgpack");
    const decoded = decode(answer.bytes, { useBigInt64: true }) as Record<string, unknown>;
    expect(decoded.sequence_hashes).toEqual([-1n]);
    expect(decoded.worker_id).toBe(3n);
  });

  it("answers 503 for a partition without schedulable workers", async () => {
    const p = uniquePartition();
    const answer = await selectionPost("/select", body(p, { token_ids: range(1, 4) }));
    expect(jsonOf(answer, 503)).toEqual({
      error: `no schedulable workers for model=${p.model} routing_group=default`,
    });
  });

  it("refuses prompts that lack what they need, with Dynamo's texts", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }]);
    const cases: [Record<string, unknown>, string][] = [
      [{}, "block_hashes is required without token_ids"],
      [{ block_hashes: [1] }, "sequence_hashes is required without token_ids"],
      [{ block_hashes: [1], sequence_hashes: [1] }, "isl_tokens is required without token_ids"],
      [{ block_hashes: [1], sequence_hashes: [1], isl_tokens: 0 }, "isl_tokens must be greater than 0"],
      [
        { block_hashes: [1, 2], sequence_hashes: [1], isl_tokens: 8 },
        "block_hashes length 2 must match sequence_hashes length 1",
      ],
    ];
    for (const [fields, error] of cases) {
      for (const path of ["/select", "/select_and_reserve", "/potential_loads", "/overlap_scores"]) {
        expect(jsonOf(await selectionPost(path, body(p, fields)), 400), path).toEqual({ error });
      }
    }
  });

  it("refuses mistyped fields and a bad router_config_override with 422 in serde's words", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }]);
    const bad: [Record<string, unknown>, string][] = [
      [{ token_ids: [1, -2] }, "token_ids[1]: invalid value: integer `-2`, expected u32"],
      // Long arrays of small integers, which the parser reads natively, name the same values.
      [
        { token_ids: [...LONG_PROMPT, 2 ** 32] },
        `token_ids[${LONG_PROMPT.length}]: invalid value: integer \`4294967296\`, expected u32`,
      ],
      [
        { token_ids: [...LONG_PROMPT, 2n ** 53n + 1n] },
        `token_ids[${LONG_PROMPT.length}]: invalid value: integer \`9007199254740993\`, expected u32`,
      ],
      [{ token_ids: "x" }, 'token_ids: invalid type: string "x", expected a sequence'],
      [
        { block_hashes: [2n ** 63n], sequence_hashes: [1], isl_tokens: 1 },
        "block_hashes[0]: invalid value: integer `9223372036854775808`, expected i64",
      ],
      [
        { token_ids: [1], router_config_override: { router_temperature: -1 } },
        "router_config_override: router_temperature must be greater than or equal to 0",
      ],
      [
        { token_ids: [1], router_config_override: { overlap_score_credit: "x" } },
        'router_config_override: invalid type: string "x", expected f64',
      ],
    ];
    for (const [fields, error] of bad) {
      expect(jsonOf(await selectionPost("/select", body(p, fields)), 422)).toEqual({
        error: `Failed to deserialize the JSON body into the target type: ${error}`,
      });
    }
  });

  it("answers 413 past the hash cap, 415 for another content type and 429 at the live request cap", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }]);
    const many = Array.from({ length: 65_537 }, (_, i) => i);
    const tooMany = await selectionPost(
      "/select",
      body(p, { block_hashes: many, sequence_hashes: [1], isl_tokens: 1 }),
    );
    expect(tooMany.status).toBe(413);
    expect(jsonOf(tooMany, 413).error).toContain("block_hashes");
    const plain = await send("POST", "/selection/select", {
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(jsonOf(plain, 415).error).toContain("text/plain");
    // The workers project caps a tracker at 200 live requests.
    for (let i = 0; i < 200; i++) {
      const booked = await selectionPost(
        "/select_and_reserve",
        body(p, { selection_id: `c${i}`, token_ids: [i] }),
      );
      expect(booked.status).toBe(200);
    }
    const capped = await selectionPost(
      "/select_and_reserve",
      body(p, { selection_id: "over", token_ids: [1] }),
    );
    expect(jsonOf(capped, 429).error).toContain("live request limit reached");
    const explicit = await selectionPost(
      "/reservations",
      body(p, { selection_id: "over", worker_id: 1, sequence_hashes: [1], isl_tokens: 1 }),
    );
    expect(explicit.status).toBe(429);
  });

  it("answers 404 and 405 with JSON bodies under /selection", async () => {
    expect(jsonOf(await selectionCall("GET", "/nowhere"), 404)).toEqual({ error: "route not found" });
    expect(jsonOf(await selectionCall("GET", "/select"), 405)).toEqual({ error: "method not allowed" });
    const wrong = await selectionCall("GET", "/reservations/abc");
    expect(jsonOf(wrong, 405)).toEqual({ error: "method not allowed" });
    expect(wrong.headers.get("allow")).toBe("DELETE");
    expect(jsonOf(await selectionCall("PUT", "/reservations/abc/prefill_complete"), 405)).toEqual({
      error: "method not allowed",
    });
  });
});

describe("POST /selection/reservations and the lifecycle routes", () => {
  it("books an explicit reservation (201) and runs it through prefill, output and free", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 5n, dpSize: 2 }]);
    const reserved = await selectionPost(
      "/reservations",
      body(p, {
        selection_id: "r-1",
        worker_id: 5,
        dp_rank: 1,
        token_ids: range(1, 8),
        effective_prefill_tokens: 6,
      }),
    );
    expect(reserved.status).toBe(201);
    expect(reserved.text).toBe(
      `{"selection_id":"r-1","model_name":"${p.model}","routing_group":"default","worker_id":5,"dp_rank":1,"endpoint":"http://w5"}`,
    );
    const rank = async () => {
      const loads = jsonOf(
        await selectionCall("GET", `/loads?model_name=${p.model}&routing_group=default`),
        200,
      );
      return (loads as unknown as { loads: Record<string, number>[] }[])[0]!.loads[1]!;
    };
    expect(await rank()).toMatchObject({
      potential_prefill_tokens: 6,
      potential_decode_blocks: 2,
      active_requests: 1,
    });
    expect(jsonOf(await selectionCall("POST", "/reservations/r-1/prefill_complete"), 200)).toEqual({
      status: "ok",
    });
    expect(jsonOf(await selectionCall("POST", "/reservations/r-1/prefill_complete"), 200)).toEqual({
      status: "ok",
    });
    expect(jsonOf(await selectionCall("POST", "/reservations/r-1/output_block"), 200)).toEqual({
      status: "ok",
    });
    const half = await selectionPost("/reservations/r-1/output_block", { decay_fraction: 0.5 });
    expect(jsonOf(half, 200)).toEqual({ status: "ok" });
    expect(await rank()).toMatchObject({ potential_prefill_tokens: 0, potential_decode_blocks: 4 });
    expect(jsonOf(await selectionCall("DELETE", "/reservations/r-1"), 200)).toEqual({ status: "ok" });
    expect(await rank()).toMatchObject({ potential_decode_blocks: 0, active_requests: 0 });
    for (const [method, path] of [
      ["DELETE", "/reservations/r-1"],
      ["POST", "/reservations/r-1/prefill_complete"],
      ["POST", "/reservations/r-1/output_block"],
    ] as const) {
      expect(jsonOf(await selectionCall(method, path), 404)).toEqual({ error: "reservation r-1 not found" });
    }
  });

  it("refuses a reservation without selection_id (422), an effective prefill above the prompt (400), a bad decay fraction (400)", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 5n }]);
    const missing = jsonOf(
      await selectionPost("/reservations", body(p, { worker_id: 5, token_ids: [1] })),
      422,
    );
    expect(missing.error).toContain("selection_id");
    const above = await selectionPost(
      "/reservations",
      body(p, {
        selection_id: "e",
        worker_id: 5,
        sequence_hashes: [1],
        isl_tokens: 4,
        effective_prefill_tokens: 5,
      }),
    );
    expect(jsonOf(above, 400)).toEqual({
      error: "effective_prefill_tokens (5) must not exceed isl_tokens (4)",
    });
    const unknown = await selectionPost(
      "/reservations",
      body(p, { selection_id: "e", worker_id: 6, sequence_hashes: [1], isl_tokens: 4 }),
    );
    expect(jsonOf(unknown, 404)).toEqual({
      error: `schedulable worker 6 not found for model=${p.model} routing_group=default`,
    });
    await selectionPost(
      "/reservations",
      body(p, { selection_id: "d", worker_id: 5, sequence_hashes: [1], isl_tokens: 4 }),
    );
    for (const decay_fraction of [-0.1, 1.5]) {
      const answer = await selectionPost("/reservations/d/output_block", { decay_fraction });
      expect(jsonOf(answer, 400)).toEqual({ error: "decay_fraction must be between 0.0 and 1.0" });
    }
  });
});

describe("GET /selection/dump, POST /selection/potential_loads and /selection/overlap_scores", () => {
  it("report the cache index: credited prefill, tiered overlap rows, and Dynamo's Stored events", async () => {
    const p = uniquePartition();
    await schedule(p, [{ workerId: 1n }, { workerId: 2n }]);
    const booked = await selectionPost(
      "/select_and_reserve",
      body(p, { selection_id: "w", token_ids: range(1, 8), pinned_worker: { worker_id: 1, dp_rank: 0 } }),
    );
    expect(booked.status).toBe(200);
    await selectionCall("DELETE", "/reservations/w");
    const potential = jsonOf(
      await selectionPost("/potential_loads", body(p, { token_ids: range(1, 12) })),
      200,
    );
    expect(potential).toEqual([
      {
        worker_id: 1,
        dp_rank: 0,
        potential_prefill_tokens: 4,
        potential_decode_blocks: 3,
        active_requests: 0,
      },
      {
        worker_id: 2,
        dp_rank: 0,
        potential_prefill_tokens: 12,
        potential_decode_blocks: 3,
        active_requests: 0,
      },
    ]);
    const scores = jsonOf(await selectionPost("/overlap_scores", body(p, { token_ids: range(1, 12) })), 200);
    expect(scores).toEqual({
      block_size: 4,
      num_blocks: 3,
      workers: [
        {
          worker_id: 1,
          dp_rank: 0,
          device_blocks: 2,
          host_pinned_blocks: 2,
          disk_blocks: 2,
          host_pinned_extension_blocks: 0,
          disk_extension_blocks: 0,
          router_credit_blocks: 2,
        },
        {
          worker_id: 2,
          dp_rank: 0,
          device_blocks: 0,
          host_pinned_blocks: 0,
          disk_blocks: 0,
          host_pinned_extension_blocks: 0,
          disk_extension_blocks: 0,
          router_credit_blocks: 0,
        },
      ],
      shared_cache: { enabled: false, total_hit_blocks: 0, ranges: [] },
    });
    const dump = jsonOf(await selectionCall("GET", "/dump"), 200);
    expect(dump[`${p.model}:default`]).toEqual({
      block_size: 4,
      events: [
        {
          worker_id: 1,
          storage_tier: "device",
          event: {
            event_id: 0,
            data: {
              stored: {
                parent_hash: null,
                blocks: [
                  { block_hash: B_1_4, tokens_hash: B_1_4 },
                  { block_hash: 4945711292740353085n, tokens_hash: 16777012769546811212n },
                ],
              },
            },
            dp_rank: 0,
          },
        },
      ],
    });
  });
});
