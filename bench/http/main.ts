/**
 * The HTTP benchmark: the Worker from `wrangler.toml`, started by wrangler's `unstable_startWorker`
 * on 127.0.0.1 with on-disk local state in a fresh temp dir, driven by autocannon from this process.
 * argv[2] is the repo root. Prints one JSON line with each scenario's figures.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_startWorker } from "wrangler";
import { AddBodies, batch, MODEL, registrations } from "./bodies";
import { CONNECTIONS } from "./load";
import { addFree, batches, health, QUERY_BOOK, queries } from "./scenarios";

const root = process.argv[2];
if (!root) throw new Error("usage: http.mjs <repo root>");
const state = mkdtempSync(join(tmpdir(), "slot-tracker-bench-"));
const worker = await unstable_startWorker({
  config: join(root, "wrangler.toml"),
  dev: {
    server: { hostname: "127.0.0.1", port: 0 },
    inspector: false,
    persist: state,
    logLevel: "warn",
    watch: false,
    remote: false,
  },
});

async function post(url: string, path: string, body: string | Buffer, type = "application/json") {
  const res = await fetch(`${url}${path.slice(1)}`, {
    method: "POST",
    body,
    headers: { "content-type": type },
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res;
}

try {
  await worker.ready;
  const url = (await worker.url).toString();
  for (const body of registrations()) await post(url, "/register", body);
  const bodies = new AddBodies(QUERY_BOOK);

  const scenarios = [
    await health(url),
    await addFree(url, "json", bodies),
    await addFree(url, "msgpack", bodies),
  ];
  // The book the queries run against: the trace's first requests, whose prompts the queries continue.
  for (let i = 0; i < QUERY_BOOK; i += 250) {
    const ops = Array.from({ length: 250 }, (_, k) => bodies.addOp(i + k, `q${i + k}`));
    await post(url, "/batch", batch(ops), "application/msgpack");
  }
  scenarios.push(await queries(url, "json"), await queries(url, "msgpack"));
  const { figures, opsPerSec } = await batches(url, bodies);
  scenarios.push(figures);
  const loads = await (await fetch(`${url}loads?model_name=${MODEL}`)).json();
  process.stdout.write(
    `@@bench ${JSON.stringify({ connections: CONNECTIONS, scenarios, batchOpsPerSec: opsPerSec, ranks: (loads as unknown[]).length })}\n`,
  );
} finally {
  await worker.dispose();
  rmSync(state, { recursive: true, force: true });
}
