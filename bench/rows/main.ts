/**
 * SQLite rows written per `/add`, measured where SQLite counts them. The Worker is bundled as it
 * deploys (`wrangler deploy --dry-run`) and run in Miniflare with the bindings `wrangler.toml`
 * declares, so the object can be asked over RPC (`rowsWritten()`, SQLite's own `rowsWritten`
 * summed over the tracker's writes) before and after adds sent over HTTP: no test-only route.
 * argv[2] is the repo root. Prints one JSON line.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { trackerName } from "../../durable-objects/naming";
import { AddBodies, MODEL, registrations } from "../http/bodies";

const ADDS = 500;

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
} as ConstructorParameters<typeof Miniflare>[0]);

async function post(path: string, body: string | Buffer) {
  const res = await mf.dispatchFetch(`http://localhost${path}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json" },
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
  process.stdout.write(
    `@@bench ${JSON.stringify({ adds: ADDS, rowsPerAdd: (afterAdds - before) / ADDS, rowsPerFree: (afterFrees - afterAdds) / ADDS })}\n`,
  );
} finally {
  await mf.dispose();
  rmSync(out, { recursive: true, force: true });
}
