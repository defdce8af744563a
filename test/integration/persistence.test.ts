import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { miniflareWasmRules } from "../../durable-objects/core/hashing/wasm/loaders.mjs";

/**
 * The built Worker in Miniflare with on-disk state: what `wrangler dev` does, minus wrangler. A
 * second Miniflare on the same directory must find everything the first one acknowledged.
 */

const root = join(import.meta.dirname, "../..");
let work: string;
let script: string;

function start(persist: string): Miniflare {
  return new Miniflare({
    modules: true,
    scriptPath: script,
    // Module names are taken relative to this root; the bundle lives outside the project.
    modulesRoot: join(work, "dist"),
    modulesRules: miniflareWasmRules,
    compatibilityDate: "2026-04-20",
    durableObjects: {
      TRACKER: { className: "TrackerObject", useSQLite: true },
      DIRECTORY: { className: "DirectoryObject", useSQLite: true },
    },
    durableObjectsPersist: persist,
    bindings: { REQUEST_EXPIRY_SECONDS: "300", REPLICAS: "primary" },
  });
}

async function call(mf: Miniflare, path: string, body?: string) {
  const res = await mf.dispatchFetch(`http://localhost${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body,
  });
  return { status: res.status, text: await res.text() };
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "slot-tracker-it-"));
  execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", join(work, "dist")], {
    cwd: root,
    stdio: "pipe",
  });
  script = join(work, "dist", "index.js");
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe("state persisted by Miniflare", () => {
  it("survives disposing the runtime and starting a fresh one on the same directory", async () => {
    const persist = join(work, "state");
    const big = "18446744073709551614";
    const first = start(persist);
    const register = [
      `{"worker_id":${big},"model_name":"llama","block_size":16,"dp_start":0,"dp_size":2}`,
      `{"worker_id":7,"model_name":"llama","tenant_id":"acme","block_size":32,"dp_start":4,"dp_size":1}`,
      `{"worker_id":3,"model_name":"qwen","block_size":64,"dp_start":0,"dp_size":1}`,
    ];
    for (const body of register) expect((await call(first, "/register", body)).status).toBe(201);
    const adds = [
      `{"model_name":"llama","request_id":"r1","worker_id":${big},"dp_rank":1,"sequence_hashes":[1,2,-1],"new_isl_tokens":48}`,
      `{"model_name":"llama","request_id":"r2","worker_id":${big},"dp_rank":1,"sequence_hashes":[1,2,18446744073709551615,5],"new_isl_tokens":16}`,
      `{"model_name":"llama","tenant_id":"acme","request_id":"r3","worker_id":7,"dp_rank":4,"sequence_hashes":[9],"new_isl_tokens":5}`,
      `{"model_name":"qwen","request_id":"r4","worker_id":3,"dp_rank":0,"sequence_hashes":[4,4],"new_isl_tokens":2}`,
    ];
    for (const body of adds) expect((await call(first, "/add", body)).status).toBe(201);
    expect((await call(first, "/prefill_complete", `{"model_name":"llama","request_id":"r2"}`)).status).toBe(
      200,
    );
    const potentialBody = `{"model_name":"llama","sequence_hashes":[1,2,-1,8],"new_isl_tokens":4}`;
    const before = {
      workers: await call(first, "/workers"),
      loads: await call(first, "/loads"),
      potential: await call(first, "/potential_loads", potentialBody),
    };
    await first.dispose();

    const second = start(persist);
    try {
      expect(await call(second, "/workers")).toEqual(before.workers);
      expect(await call(second, "/loads")).toEqual(before.loads);
      expect(await call(second, "/potential_loads", potentialBody)).toEqual(before.potential);
      expect(before.workers.text).toContain(`"worker_id":${big}`);
      expect(JSON.parse(before.loads.text)).toHaveLength(4);
      expect(before.loads.text).toContain(
        `{"model_name":"llama","tenant_id":"default","worker_id":${big},"dp_rank":1,"active_prefill_tokens":48,"active_decode_blocks":4}`,
      );
      // The restored requests are live: a duplicate id is refused, a free releases its blocks.
      expect((await call(second, "/add", adds[0])).status).toBe(409);
      expect((await call(second, "/free", `{"model_name":"qwen","request_id":"r4"}`)).status).toBe(200);
      expect((await call(second, "/loads?model_name=qwen")).text).toBe(
        `[{"model_name":"qwen","tenant_id":"default","worker_id":3,"dp_rank":0,"active_prefill_tokens":0,"active_decode_blocks":0}]`,
      );
    } finally {
      await second.dispose();
    }
  });

  it("keeps the selection catalog, incomplete records included, across a restart", async () => {
    const persist = join(work, "catalog-state");
    const big = "18446744073709551613";
    const first = start(persist);
    const records = [
      `{"worker_id":${big},"model_name":"llama","endpoint":"http://w1:8000","block_size":16,"data_parallel_size":2}`,
      `{"worker_id":5,"model_name":"llama","routing_group":"acme","taints":["b","a"]}`,
    ];
    for (const body of records) expect((await call(first, "/selection/workers", body)).status).toBe(201);
    const before = {
      catalog: await call(first, "/selection/workers"),
      workers: await call(first, "/workers"),
    };
    await first.dispose();

    const second = start(persist);
    try {
      expect(await call(second, "/selection/workers")).toEqual(before.catalog);
      expect(await call(second, "/workers")).toEqual(before.workers);
      expect(before.catalog.text).toContain(
        `"worker_id":${big},"model_name":"llama","routing_group":"default","lifecycle":"schedulable"`,
      );
      expect(before.catalog.text).toContain(`"taints":["a","b"]`);
      expect(before.workers.text).toContain(`"worker_id":${big}`);
    } finally {
      await second.dispose();
    }
  });
});
