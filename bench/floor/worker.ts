/**
 * The platform floor for the HTTP benchmark: a Worker on the same stack as the service (Hono, one
 * Durable Object reached by name over RPC, its SQLite storage) whose `/add`, `/free` and `/batch`
 * do only what any durable answer to them must: read the body, carry it to the object, write it there
 * as one row, and answer; and whose `/potential_loads` does only what any answer to a query must:
 * carry it to the object, where the book lives, and bring back an answer of the service's shape (64
 * ranks' loads, encoded once at start, in the format `Accept` names). Its selection routes do the
 * same for a booking: `POST /selection/select_and_reserve` carries the body to the object, writes it
 * as one row and brings back a ready `SelectResponse` of the service's shape for a 128-block prompt;
 * `DELETE /selection/reservations/{id}` carries the id there and writes it as one row (a booking's
 * end is a durable change too). No decoding, validation,
 * tracking or logging. The same load against it and against the service, in the same run, shows how
 * much of a figure is the runtime's and how close the service comes to it: no route that persists
 * what it is sent, or answers from the object, can beat these figures here.
 */

import { DurableObject } from "cloudflare:workers";
import { encode } from "@msgpack/msgpack";
import { Hono } from "hono";

/** Rows kept: the table is rewritten in a ring, so it stays small however long the load runs. */
const RING = 1024;
/** The service's answers, byte for byte in shape: `{}` for one op, 256 `{status}` results for a batch. */
const OK = "{}";
const BATCH_OPS = 256;
const BATCH_OK = msgpackResults(BATCH_OPS);
/** The HTTP bench's book: 8 workers of 8 ranks, with 64-bit ids as the service carries them. */
const WORKERS = 8;
const DP_SIZE = 8;
const LOADS = potentialLoads();
/** An answer's bytes in a buffer of their own, as the object hands them over RPC. */
const own = (bytes: Uint8Array): ArrayBuffer => Uint8Array.from(bytes).buffer;
const LOADS_JSON = own(
  new TextEncoder().encode(
    `[${LOADS.map((l) => `{"worker_id":${l.worker_id},"dp_rank":${l.dp_rank},"potential_prefill_tokens":${l.potential_prefill_tokens},"potential_decode_blocks":${l.potential_decode_blocks},"active_requests":${l.active_requests}}`).join(",")}]`,
  ),
);
const LOADS_MSGPACK = own(encode(LOADS, { useBigInt64: true }));
const SELECTED = own(new TextEncoder().encode(selectResponse()));

interface Env {
  FLOOR: DurableObjectNamespace<FloorObject>;
}

export class FloorObject extends DurableObject<Env> {
  private next = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS carried (slot INTEGER PRIMARY KEY, body BLOB)");
  }

  /** Writes `body` as one row; the answer leaves once the write is durable (the output gate). */
  carry(body: ArrayBuffer): number {
    const slot = this.next++ % RING;
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO carried (slot, body) VALUES (?, ?)", slot, body);
    return slot;
  }

  /** Writes `id` as one row, as `carry` writes a body. */
  carryId(id: string): number {
    return this.carry(new TextEncoder().encode(id).buffer as ArrayBuffer);
  }

  /** Writes `body` as one row and answers a ready booking answer of the service's size. */
  book(body: ArrayBuffer): ArrayBuffer {
    this.carry(body);
    return SELECTED;
  }

  /** Takes a query and answers it with a ready answer of the service's size; nothing is written. */
  answer(_query: ArrayBuffer, msgpack: boolean): ArrayBuffer {
    return msgpack ? LOADS_MSGPACK : LOADS_JSON;
  }
}

const app = new Hono<{ Bindings: Env }>();
app.get("/health", (c) => c.body(null, 200));
for (const path of ["/add", "/free"]) {
  app.post(path, async (c) => {
    await c.env.FLOOR.getByName("bench").carry(await c.req.arrayBuffer());
    return c.body(OK, path === "/add" ? 201 : 200, { "content-type": "application/json" });
  });
}
app.post("/batch", async (c) => {
  await c.env.FLOOR.getByName("bench").carry(await c.req.arrayBuffer());
  return c.body(BATCH_OK.slice(), 200, { "content-type": "application/msgpack" });
});

app.post("/potential_loads", async (c) => {
  const msgpack = c.req.header("accept")?.includes("msgpack") ?? false;
  const answer = await c.env.FLOOR.getByName("bench").answer(await c.req.arrayBuffer(), msgpack);
  return c.body(answer, 200, { "content-type": msgpack ? "application/msgpack" : "application/json" });
});

app.post("/selection/select_and_reserve", async (c) => {
  const answer = await c.env.FLOOR.getByName("bench").book(await c.req.arrayBuffer());
  return c.body(answer, 200, { "content-type": "application/json" });
});
app.delete("/selection/reservations/:id", async (c) => {
  await c.env.FLOOR.getByName("bench").carryId(c.req.param("id"));
  return c.body('{"status":"ok"}', 200, { "content-type": "application/json" });
});

export default app;

/** A `/potential_loads` answer's rows for the bench's 64 ranks, with figures of a plausible size. */
function potentialLoads() {
  return Array.from({ length: WORKERS * DP_SIZE }, (_, i) => ({
    worker_id: 0x7a3f_19c2_0000_0000n + BigInt(i >> 3),
    dp_rank: i % DP_SIZE,
    potential_prefill_tokens: 40_000 + 97 * i,
    potential_decode_blocks: 3_000 + 31 * i,
    active_requests: 15 + (i % 7),
  }));
}

/**
 * A `SelectResponse` of a booking as the service writes it for the selection bench's prompts (128
 * blocks, 2,048 tokens, a worker of 4 DP ranks): every field, with the booked `sequence_hashes` as
 * 128 i64s of full width.
 */
function selectResponse(): string {
  const hashes = Array.from(
    { length: 128 },
    (_, i) => -9_000_000_000_000_000_000n + 140_737_488_355_333n * BigInt(i * 997),
  );
  return JSON.stringify({
    selection_id: "3f0c2a9e-8b1d-4c55-9e07-6a2b1d4e8f10",
    sequence_hashes: "@@HASHES",
    isl_tokens: 2048,
    track_prefill_tokens: true,
    model_name: "bench-selection",
    routing_group: "default",
    worker_id: "@@WORKER",
    dp_rank: 2,
    endpoint: "http://w11400714819323199496:8000",
    block_size: 16,
    overlap: { longest_matched: 1024, gpu: 1024, dp: { "0": 0, "1": 0, "2": 1024, "3": 0 }, cpu: 0, disk: 0 },
    effective_prefill_tokens: 1024,
    potential_decode_blocks: 3187,
  })
    .replace('"@@HASHES"', `[${hashes.join(",")}]`)
    .replace('"@@WORKER"', "11400714819323199496");
}

/** `{"results": [{"status": 200} × count]}` in MessagePack. */
function msgpackResults(count: number): Uint8Array {
  const out = [0x81, 0xa7, ...new TextEncoder().encode("results"), 0xdc, count >> 8, count & 0xff];
  const op = [0x81, 0xa6, ...new TextEncoder().encode("status"), 0xcc, 200];
  for (let i = 0; i < count; i++) out.push(...op);
  return Uint8Array.from(out);
}
