/**
 * The HTTP benchmark: the Worker from `wrangler.toml`, started by wrangler's `unstable_startWorker`
 * on 127.0.0.1 with on-disk local state in a fresh temp dir, driven by autocannon from this process;
 * then the same loads against the platform floor (`bench/floor`), a Worker that only carries each body
 * to a Durable Object and writes it as one row (a query: carries it there and brings back a ready
 * answer). argv[2] is the repo root. Prints one JSON line with each scenario's figures.
 */
import { AddBodies, batch, MODEL, registrations } from "./bodies";
import { CONNECTIONS, type LoadFigures } from "./load";
import { addFree, batches, health, QUERY_BOOK, queries } from "./scenarios";
import { post, startLocalWorker, type WorkerSources } from "./worker";

const root = process.argv[2];
if (!root) throw new Error("usage: http.mjs <repo root>");
const service = await measure(root, undefined, measureService);
const floor = await measure(
  root,
  { dir: "bench/floor", entries: ["wrangler.toml", "worker.ts"] },
  measureFloor,
);
process.stdout.write(`@@bench ${JSON.stringify({ connections: CONNECTIONS, ...service, floor })}\n`);

/** Starts the Worker of `from` (the service's by default), measures it with `fn`, and stops it. */
async function measure<T>(
  repo: string,
  from: WorkerSources | undefined,
  fn: (url: string) => Promise<T>,
): Promise<T> {
  const worker = await startLocalWorker(repo, {}, from);
  try {
    return await fn(worker.url);
  } finally {
    await worker.stop();
  }
}

/** The scenarios both Workers answer first: the bare round trip, then `/add`+`/free` in each format. */
async function roundTrips(url: string, bodies: AddBodies): Promise<LoadFigures[]> {
  return [await health(url), await addFree(url, "json", bodies), await addFree(url, "msgpack", bodies)];
}

async function measureService(url: string) {
  for (const body of registrations()) await post(url, "/register", body);
  const bodies = new AddBodies(QUERY_BOOK);
  const scenarios = await roundTrips(url, bodies);
  // The book the queries run against: the trace's first requests, whose prompts the queries continue.
  for (let i = 0; i < QUERY_BOOK; i += 250) {
    const ops = Array.from({ length: 250 }, (_, k) => bodies.addOp(i + k, `q${i + k}`));
    await post(url, "/batch", batch(ops), "application/msgpack");
  }
  scenarios.push(await queries(url, "json"), await queries(url, "msgpack"));
  const { figures, opsPerSec } = await batches(url, bodies);
  scenarios.push(figures);
  const loads = await (await fetch(`${url}loads?model_name=${MODEL}`)).json();
  return { scenarios, batchOpsPerSec: opsPerSec, ranks: (loads as unknown[]).length };
}

/** The platform floor under the same loads (bodies included), in the same order, for the ratios' ceilings. */
async function measureFloor(url: string) {
  const bodies = new AddBodies(QUERY_BOOK);
  const scenarios = await roundTrips(url, bodies);
  scenarios.push(await queries(url, "json"), await queries(url, "msgpack"));
  const { figures, opsPerSec } = await batches(url, bodies);
  scenarios.push(figures);
  return { scenarios, batchOpsPerSec: opsPerSec };
}
