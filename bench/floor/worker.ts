/**
 * The platform floor for the HTTP benchmark: a Worker on the same stack as the service (Hono, one
 * Durable Object reached by name over RPC, its SQLite storage) whose `/add`, `/free` and `/batch`
 * do only what any durable answer to them must: read the body, carry it to the object, write it there
 * as one row, and answer. No decoding, validation, tracking or logging. The same load against it and
 * against the service, in the same run, shows how much of a figure is the runtime's and how close
 * the service comes to it: no route that persists what it is sent can beat these figures here.
 */
import { DurableObject } from "cloudflare:workers";
import { Hono } from "hono";

/** Rows kept: the table is rewritten in a ring, so it stays small however long the load runs. */
const RING = 1024;
/** The service's answers, byte for byte in shape: `{}` for one op, 256 `{status}` results for a batch. */
const OK = "{}";
const BATCH_OPS = 256;
const BATCH_OK = msgpackResults(BATCH_OPS);

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

export default app;

/** `{"results": [{"status": 200} × count]}` in MessagePack. */
function msgpackResults(count: number): Uint8Array {
  const out = [0x81, 0xa7, ...new TextEncoder().encode("results"), 0xdc, count >> 8, count & 0xff];
  const op = [0x81, 0xa6, ...new TextEncoder().encode("status"), 0xcc, 200];
  for (let i = 0; i < count; i++) out.push(...op);
  return Uint8Array.from(out);
}
