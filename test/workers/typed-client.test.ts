import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BIG_WORKER, demo } from "../../examples/frontend";
import { postExact, readExact, slotTrackerClient } from "../../src/client";

/** `exports.default` is typed only when GlobalProps names the main module; its runtime shape is a Fetcher. */
const worker = (exports as unknown as { default: Fetcher }).default;
const viaWorker: typeof fetch = (input, init) => worker.fetch(new Request(input, init));

describe("the typed client and the example frontend", () => {
  it("runs the example against the real Worker: registers, routes, frees, and leaves nothing booked", async () => {
    const lines: string[] = [];
    const result = await demo(slotTrackerClient("http://tracker", { fetch: viaWorker }), (line) =>
      lines.push(line),
    );
    expect(result.placements).toHaveLength(3);
    for (const placement of result.placements) {
      expect([`7/0`, `7/1`, `${BIG_WORKER}/0`]).toContain(placement);
    }
    // Three prompts over 6 + 3 distinct hashes; they may share a rank, so at least 6, at most 13 blocks.
    expect(result.decodeBlocksBooked).toBeGreaterThanOrEqual(6);
    expect(result.decodeBlocksAfterFree).toBe(0);
    expect(lines.join("\n")).toContain(`worker ${BIG_WORKER} rank 0`);
  });

  it("sends and reads worker ids above 2^53 exactly, which JSON.stringify and JSON.parse cannot", async () => {
    const client = slotTrackerClient("http://tracker", { fetch: viaWorker });
    const model = `typed-${crypto.randomUUID()}`;
    const id = (1n << 64n) - 2n;
    const res = await postExact(client.register.$post, {
      worker_id: id,
      model_name: model,
      block_size: 16,
      dp_start: 0,
      dp_size: 1,
    });
    expect(res.status).toBe(201);
    const workers = await readExact(await client.workers.$get({ query: { model_name: model } }));
    expect(workers.map((w) => w.worker_id)).toEqual([id]);
    const rounded = (await (await client.workers.$get({ query: { model_name: model } })).json())[0]
      ?.worker_id;
    expect(BigInt(rounded ?? 0)).not.toBe(id);
  });

  it("sends the bearer token and the replica header it was given", async () => {
    const seen: Headers[] = [];
    const recording: typeof fetch = async (input, init) => {
      seen.push(new Headers(init?.headers));
      return viaWorker(input, init);
    };
    const client = slotTrackerClient("http://tracker", {
      fetch: recording,
      token: "t0k",
      replica: "primary",
    });
    expect((await client.health.$get()).status).toBe(200);
    expect(seen[0]?.get("authorization")).toBe("Bearer t0k");
    expect(seen[0]?.get("x-slot-tracker-replica")).toBe("primary");
  });
});
