/**
 * The HTTP benchmark: the Worker from `wrangler.toml`, started by wrangler's `unstable_startWorker`
 * on 127.0.0.1 with on-disk local state in a fresh temp dir, driven by autocannon from this process;
 * and beside it the platform floor (`bench/floor`), a Worker that only carries each body to a Durable
 * Object and writes it as one row (a query: carries it there and brings back a ready answer). Each
 * scenario runs against the service and then at once against the floor, so that the two figures of a
 * ratio are taken within seconds of each other: on a shared machine the load of other work drifts
 * over minutes, and a floor measured after all of the service's scenarios measured another machine.
 * argv[2] is the repo root. Prints one JSON line with each scenario's figures.
 */
import { AddBodies, batch, MODEL, registrations } from "./bodies";
import { kvEventLoad } from "./kv-events";
import { CONNECTIONS, type LoadFigures } from "./load";
import { addFree, batches, health, QUERY_BOOK, queries } from "./scenarios";
import { post, withServiceAndFloor } from "./worker";

const root = process.argv[2];
if (!root) throw new Error("usage: http.mjs <repo root>");

const figures = await withServiceAndFloor(root, measure);
process.stdout.write(`@@bench ${JSON.stringify({ connections: CONNECTIONS, ...figures })}\n`);

/** Each scenario's figures for the service and for the floor, the two runs of a scenario back to back. */
async function measure(serviceUrl: string, floorUrl: string) {
  const scenarios: LoadFigures[] = [];
  const floorScenarios: LoadFigures[] = [];
  const both = async (run: (url: string) => Promise<LoadFigures>) => {
    scenarios.push(await run(serviceUrl));
    floorScenarios.push(await run(floorUrl));
  };
  for (const body of registrations()) await post(serviceUrl, "/register", body);
  const serviceBodies = new AddBodies(QUERY_BOOK);
  const floorBodies = new AddBodies(QUERY_BOOK);
  const bodiesOf = (url: string) => (url === serviceUrl ? serviceBodies : floorBodies);
  await both(health);
  await both((url) => addFree(url, "json", bodiesOf(url)));
  await both((url) => addFree(url, "msgpack", bodiesOf(url)));
  // The book the queries run against: the trace's first requests, whose prompts the queries continue.
  for (let i = 0; i < QUERY_BOOK; i += 250) {
    const ops = Array.from({ length: 250 }, (_, k) => serviceBodies.addOp(i + k, `q${i + k}`));
    await post(serviceUrl, "/batch", batch(ops), "application/msgpack");
  }
  await both((url) => queries(url, "json"));
  await both((url) => queries(url, "msgpack"));
  const service = await batches(serviceUrl, serviceBodies);
  const floorBatches = await batches(floorUrl, floorBodies);
  scenarios.push(service.figures);
  floorScenarios.push(floorBatches.figures);
  // Engine KV events beside the lifecycle: the events one object applies against the ops it books.
  const kv = await kvEventLoad(serviceUrl);
  scenarios.push(kv.figures);
  const loads = await (await fetch(`${serviceUrl}loads?model_name=${MODEL}`)).json();
  return {
    scenarios,
    batchOpsPerSec: service.opsPerSec,
    kvEvents: { eventsPerSec: kv.eventsPerSec, rowsPer1000Events: kv.rowsPer1000Events },
    ranks: (loads as unknown[]).length,
    floor: { scenarios: floorScenarios, batchOpsPerSec: floorBatches.opsPerSec },
  };
}
