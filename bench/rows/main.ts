/**
 * SQLite rows written per `/add`, measured where SQLite counts them. The Worker is bundled as it
 * deploys (`wrangler deploy --dry-run`) and run in Miniflare with the bindings `wrangler.toml`
 * declares, so the object can be asked over RPC (`rowsWritten()`, SQLite's own `rowsWritten`
 * summed over the tracker's writes) before and after adds sent over HTTP: no test-only route; then
 * per op of `/batch` calls of the HTTP bench's shape (ops of unknown ids answer 200 and write nothing).
 * argv[2] is the repo root. Prints one JSON line.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { miniflareWasmRules } from "../../durable-objects/core/hashing/wasm/loaders.mjs";
import { trackerName } from "../../durable-objects/naming";
import { AddBodies, batch, idOp, MODEL, registrations } from "../http/bodies";
import { BATCH_OPS } from "../http/scenarios";

const ADDS = 500;
/** `/batch` calls in the lifecycle run: 86 adds, 85 prefill completions, 85 frees each. */
const BATCH_CALLS = 600;
/** A request is freed this many calls after it was booked (~a second at the HTTP bench's rate). */
const BATCH_LIFETIME_CALLS = 100;

const root = process.argv[2];
if (!root) throw new Error("usage: rows.mjs <repo root>");
const out = mkdtempSync(join(tmpdir(), "slot-tracker-rows-"));
execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", out], { cwd: root, stdio: "ignore" });
const { workerOptions } = unstable_getMiniflareWorkerOptions(join(root, "wrangler.toml"));
const mf = new Miniflare({
  ...workerOptions,
  modules: true,
  scriptPath: join(out, "index.js"),
  modulesRoot: out,
  modulesRules: miniflareWasmRules,
} as ConstructorParameters<typeof Miniflare>[0]);

async function post(path: string, body: string | Buffer, type = "application/json") {
  const res = await mf.dispatchFetch(`http://localhost${path}`, {
    method: "POST",
    body,
    headers: { "content-type": type },
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

try {
  for (const body of registrations()) await post("/register", body);
  const namespace = await mf.getDurableObjectNamespace("TRACKER");
  const stub = namespace.get(
    namespace.idFromName(trackerName({ replica: "primary", model: MODEL, tenant: "default" })),
  );
  const rowsWritten = () => (stub as unknown as { rowsWritten(): Promise<number> }).rowsWritten();
  const bodies = new AddBodies(ADDS);
  const before = await rowsWritten();
  for (let i = 0; i < ADDS; i++) await post("/add", bodies.add("json", i, `rows-${i}`));
  const afterAdds = await rowsWritten();
  for (let i = 0; i < ADDS; i++)
    await post("/free", JSON.stringify({ model_name: MODEL, request_id: `rows-${i}` }));
  const afterFrees = await rowsWritten();

  // `/batch` calls as the HTTP bench sends them: each books 86 requests, completes the prefill of
  // those booked half a lifetime earlier and frees those booked a lifetime earlier.
  const adds = BATCH_OPS - 2 * 85;
  const idOf = (call: number, k: number) => `b${call}-${k}`;
  let n = 0;
  for (let call = 0; call < BATCH_CALLS; call++) {
    const ops = Array.from({ length: adds }, (_, k) => bodies.addOp(n++ % ADDS, idOf(call, k)));
    const half = call - BATCH_LIFETIME_CALLS / 2;
    const whole = call - BATCH_LIFETIME_CALLS;
    for (let k = 0; k < 85; k++) ops.push(idOp("prefill_complete", idOf(half, k)));
    for (let k = 0; k < 85; k++) ops.push(idOp("free", idOf(whole, k)));
    await post("/batch", batch(ops), "application/msgpack");
  }
  const afterBatches = await rowsWritten();
  process.stdout.write(
    `@@bench ${JSON.stringify({
      adds: ADDS,
      rowsPerAdd: (afterAdds - before) / ADDS,
      rowsPerFree: (afterFrees - afterAdds) / ADDS,
      batchCalls: BATCH_CALLS,
      batchLifetimeCalls: BATCH_LIFETIME_CALLS,
      rowsPerBatchOp: (afterBatches - afterFrees) / (BATCH_CALLS * BATCH_OPS),
    })}\n`,
  );
} finally {
  await mf.dispose();
  rmSync(out, { recursive: true, force: true });
}
