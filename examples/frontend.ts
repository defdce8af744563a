/**
 * An example frontend on the typed client (`src/client/`): it registers two workers, routes a few
 * requests with `POST /route` (choose a rank and book it in one call), prints the loads, frees the
 * requests and unregisters the workers. Every path, body and answer below is checked by TypeScript
 * against the Worker's own routes.
 *
 * Run it against a local Worker (`npm run dev` in another terminal):
 *
 *   npx esbuild examples/frontend.ts --bundle --platform=node --format=esm --outfile=dist/frontend.mjs
 *   node dist/frontend.mjs http://127.0.0.1:8787        # SLOT_TRACKER_TOKEN=… when API_TOKENS is set
 *
 * One worker id is above 2^53, as real instance ids often are: it is registered with `postExact` and
 * answers are read with `readExact`, because `JSON.stringify` / `JSON.parse` (what hono/client uses)
 * cannot carry it exactly.
 */
import { postExact, readExact, type SlotTrackerClient, slotTrackerClient } from "../src/client";

const MODEL = "example-llama-8b";
/** A worker id above 2^53: `Number(BIG_WORKER)` would round it. */
export const BIG_WORKER = 18_446_744_073_709_551_557n;
const SMALL_WORKER = 7;

export interface DemoResult {
  /** Where each request was booked, as `worker_id/dp_rank` (ids exact). */
  placements: string[];
  /** Decode blocks over all ranks while the requests are booked. */
  decodeBlocksBooked: number;
  /** Decode blocks left after freeing everything (0). */
  decodeBlocksAfterFree: number;
}

async function expectStatus(res: { status: number; text(): Promise<string> }, status: number, what: string) {
  if (res.status !== status)
    throw new Error(`${what}: expected ${status}, got ${res.status}: ${await res.text()}`);
}

async function printLoads(client: SlotTrackerClient, log: (line: string) => void): Promise<number> {
  const res = await client.loads.$get({ query: { model_name: MODEL } });
  await expectStatus(res, 200, "GET /loads");
  let blocks = 0;
  for (const row of await readExact(res)) {
    log(
      `  worker ${row.worker_id} rank ${row.dp_rank}: ${row.active_decode_blocks} decode blocks, ${row.active_prefill_tokens} prefill tokens`,
    );
    blocks += Number(row.active_decode_blocks);
  }
  return blocks;
}

/** The whole round trip; `log` receives what a person would read. */
export async function demo(
  client: SlotTrackerClient,
  log: (line: string) => void = console.log,
): Promise<DemoResult> {
  // A small id fits JSON as is; the typed body is checked against `/register`'s schema.
  const small = await client.register.$post({
    json: { worker_id: SMALL_WORKER, model_name: MODEL, block_size: 16, dp_start: 0, dp_size: 2 },
  });
  await expectStatus(small, 201, "register small");
  const big = await postExact(client.register.$post, {
    worker_id: BIG_WORKER,
    model_name: MODEL,
    block_size: 16,
    dp_start: 0,
    dp_size: 1,
  });
  await expectStatus(big, 201, "register big");
  log(`registered workers ${SMALL_WORKER} (2 ranks) and ${BIG_WORKER} (1 rank) for ${MODEL}`);

  const placements: string[] = [];
  const prompts = [
    [1, 2, 3, 4],
    [1, 2, 3, 4, 5, 6],
    [9, 8, 7],
  ];
  for (const [i, prompt] of prompts.entries()) {
    const res = await client.route.$post({
      json: {
        model_name: MODEL,
        request_id: `example-${i}`,
        sequence_hashes: prompt,
        new_isl_tokens: 64 * prompt.length,
      },
    });
    await expectStatus(res, 201, "route");
    const choice = await readExact(res);
    placements.push(`${choice.worker_id}/${choice.dp_rank}`);
    log(
      `routed example-${i} to worker ${choice.worker_id} rank ${choice.dp_rank} (${choice.mode}, logit ${choice.cost.logit})`,
    );
  }

  log("loads while booked:");
  const decodeBlocksBooked = await printLoads(client, log);

  for (const i of prompts.keys()) {
    const res = await client.free.$post({ json: { model_name: MODEL, request_id: `example-${i}` } });
    await expectStatus(res, 200, "free");
  }
  log("loads after freeing:");
  const decodeBlocksAfterFree = await printLoads(client, log);

  await expectStatus(
    await client.unregister.$post({ json: { worker_id: SMALL_WORKER, model_name: MODEL } }),
    200,
    "unregister",
  );
  await expectStatus(
    await postExact(client.unregister.$post, { worker_id: BIG_WORKER, model_name: MODEL }),
    200,
    "unregister big",
  );
  return { placements, decodeBlocksBooked, decodeBlocksAfterFree };
}

// Run as a script (`node dist/frontend.mjs <base-url>`), not when imported by a test.
const entry = globalThis.process?.argv?.[1];
if (entry !== undefined && import.meta.url === `file://${entry}`) {
  const baseUrl = process.argv[2] ?? "http://127.0.0.1:8787";
  await demo(slotTrackerClient(baseUrl, { token: process.env.SLOT_TRACKER_TOKEN }));
}
