import { encode } from "@msgpack/msgpack";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, call, launchChromium, startWorker, type Worker } from "./harness";

/**
 * The dashboard in a real browser against the real Worker, with auth on as in production: the page
 * asks for a token, shows every registered rank's loads, follows new bookings, and a screenshot is
 * kept as `test-artifacts/dashboard.png`.
 */

const TOKEN = "tok-ops-4b1e7c";
const API_TOKENS = JSON.stringify({ [TOKEN]: { tenants: ["*"], admin: true, name: "ops" } });
const BIG = "18446744073709551557";
const LLAMA = "llama-3-70b";
const QWEN = "qwen-2.5-7b";
/** A partition of the selection API: its workers come from the catalog, its bookings from selections. */
const MISTRAL = "mistral-7b";
const SEL = "18446744073709551533";
const SEL2 = "9";
/** Deadlines for what the page shows: it polls every second; CI runs every suite at once on 2 cores. */
const POLL = { timeout: 30_000, interval: 100 };
const ARTIFACT = join(import.meta.dirname, "../../test-artifacts/dashboard.png");

let worker: Worker;
let base: URL;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

async function post(path: string, body: string, expected: number): Promise<void> {
  const res = await call(base, TOKEN, "POST", path, body);
  expect(res.status, `${path} ${body} → ${res.text}`).toBe(expected);
}

const hashes = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i).join(",");

function add(
  model: string,
  tenant: string,
  id: string,
  workerId: string,
  rank: number,
  prompt: string,
  isl: number,
) {
  return post(
    "/add",
    `{"model_name":"${model}","tenant_id":"${tenant}","request_id":"${id}","worker_id":${workerId},"dp_rank":${rank},"sequence_hashes":[${prompt}],"new_isl_tokens":${isl}}`,
    201,
  );
}

async function rankShown(selector: string) {
  const row = page.locator(selector);
  if ((await row.count()) === 0) return null;
  return {
    decode: await row.getAttribute("data-decode"),
    prefill: await row.getAttribute("data-prefill"),
    requests: await row.getAttribute("data-requests"),
  };
}

/** Waits until the rank row shows exactly `expected` (decode blocks, prefill tokens, live requests). */
async function expectRank(
  model: string,
  workerId: string,
  rank: number,
  expected: { decode: number; prefill: number; requests: number },
): Promise<void> {
  const selector = `section.tracker[data-model="${model}"] .rank[data-worker="${workerId}"][data-rank="${rank}"]`;
  const want = {
    decode: String(expected.decode),
    prefill: String(expected.prefill),
    requests: String(expected.requests),
  };
  await expect.poll(() => rankShown(selector), { ...POLL, message: selector }).toEqual(want);
}

const text = (selector: string) => () => page.locator(selector).first().textContent();

beforeAll(async () => {
  worker = await startWorker({ REPLICAS: "east,west", REQUEST_EXPIRY_SECONDS: "3600" }, { API_TOKENS });
  base = await worker.url;
  const register = (
    model: string,
    tenant: string,
    id: string,
    block: number,
    start: number,
    size: number,
    extra = "",
  ) =>
    post(
      "/register",
      `{"worker_id":${id},"model_name":"${model}","tenant_id":"${tenant}","block_size":${block},"dp_start":${start},"dp_size":${size}${extra}}`,
      201,
    );
  await register(LLAMA, "default", "7", 16, 0, 2);
  await register(LLAMA, "default", BIG, 16, 0, 2);
  await register(LLAMA, "default", "12", 16, 0, 1, ',"worker_type":"prefill"');
  await register(QWEN, "acme", "3", 32, 0, 4);
  await add(LLAMA, "default", "r1", "7", 0, hashes(1, 4), 256);
  await add(LLAMA, "default", "r2", "7", 0, hashes(1, 6), 128);
  await add(LLAMA, "default", "r3", BIG, 1, hashes(10, 19), 512);
  await post("/prefill_complete", `{"model_name":"${LLAMA}","request_id":"r3"}`, 200);
  await add(QWEN, "acme", "q1", "3", 2, hashes(100, 107), 64);

  browser = await launchChromium();
  page = await browser.context.newPage();
  page.on("pageerror", (error) => pageErrors.push(String(error)));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await worker?.dispose();
});

describe("the live dashboard in Chromium", () => {
  it("asks for a token when the API requires one, and keeps it in sessionStorage once given", async () => {
    await page.goto(base.href);
    await expect.poll(text("#status-text"), POLL).toBe("token required");
    expect(await page.locator("#notice").textContent()).toContain("requires an API token");
    await page.fill("#token", TOKEN);
    await page.click("#token-form button[type=submit]");
    await expect.poll(() => page.locator("#status").getAttribute("class"), POLL).toContain("live");
    expect(await page.evaluate("sessionStorage.getItem('slot-tracker-token')")).toBe(TOKEN);
    expect(await page.locator("#token-state").textContent()).toBe("token in use");
  });

  it("shows every registered rank per model and tenant with its decode blocks, prefill tokens and live requests", async () => {
    await expectRank(LLAMA, "7", 0, { decode: 6, prefill: 384, requests: 2 });
    await expectRank(LLAMA, "7", 1, { decode: 0, prefill: 0, requests: 0 });
    await expectRank(LLAMA, BIG, 1, { decode: 10, prefill: 0, requests: 1 });
    await expectRank(LLAMA, "12", 0, { decode: 0, prefill: 0, requests: 0 });
    await expectRank(QWEN, "3", 2, { decode: 8, prefill: 64, requests: 1 });
    const cards = page.locator("section.tracker");
    const shown: string[] = [];
    for (let i = 0; i < (await cards.count()); i++) {
      const card = cards.nth(i);
      shown.push(`${await card.getAttribute("data-model")}/${await card.getAttribute("data-tenant")}`);
    }
    expect(shown).toEqual([`${LLAMA}/default`, `${QWEN}/acme`]);
    // The 64-bit id is shown exactly, not rounded through a JS number.
    expect(await page.locator(`.rank[data-worker="${BIG}"] .wid`).first().textContent()).toBe(BIG);
    expect(await page.locator(`.rank[data-worker="12"] .badge`).textContent()).toBe("prefill");
    expect(await page.locator("#t-workers").textContent()).toBe("4");
    expect(await page.locator("#t-ranks").textContent()).toBe("9");
    expect(await page.locator("#t-live").textContent()).toBe("4");
  });

  it("shows the replica that answers and its peers", async () => {
    await expect.poll(text("section.tracker .replicas .peer"), POLL).toMatch(/^west ok/);
    const line = await page.locator("section.tracker").first().locator(".replicas").textContent();
    expect(line).toContain("served by replica east");
  });

  it("follows new bookings, frees and routed requests within a few polls", async () => {
    await add(LLAMA, "default", "r4", BIG, 0, hashes(1, 8), 1000);
    await post("/free", `{"model_name":"${LLAMA}","request_id":"r1"}`, 200);
    await post(
      "/route",
      `{"model_name":"${QWEN}","tenant_id":"acme","request_id":"q2","sequence_hashes":[${hashes(100, 111)}],"new_isl_tokens":96}`,
      201,
    );
    await expectRank(LLAMA, BIG, 0, { decode: 8, prefill: 1000, requests: 1 });
    await expectRank(LLAMA, "7", 0, { decode: 6, prefill: 128, requests: 1 });
    await expect.poll(text('section.tracker[data-tenant="acme"] .sums b'), POLL).toBe("2");
    await expect.poll(text("#t-live"), POLL).toBe("5");
  });

  it("shows a selection booking as a live request of its rank, held under its selection_id", async () => {
    await post(
      "/selection/workers",
      `{"worker_id":${SEL},"model_name":"${MISTRAL}","endpoint":"http://mistral-0:8000","block_size":4,"data_parallel_size":2}`,
      201,
    );
    await post(
      "/selection/select_and_reserve",
      `{"model_name":"${MISTRAL}","selection_id":"sel-1","token_ids":[${hashes(1, 8)}],"pinned_worker":{"worker_id":${SEL},"dp_rank":1}}`,
      200,
    );
    await expectRank(MISTRAL, SEL, 1, { decode: 2, prefill: 8, requests: 1 });
    await expectRank(MISTRAL, SEL, 0, { decode: 0, prefill: 0, requests: 0 });
    // The live request the page counts is the tracker's request `sel-1`: a slot-tracker /add of that id
    // is the duplicate, naming the rank, and a /free of it ends the booking.
    const duplicate = await call(
      base,
      TOKEN,
      "POST",
      "/add",
      `{"model_name":"${MISTRAL}","request_id":"sel-1","worker_id":${SEL},"dp_rank":0,"sequence_hashes":[1]}`,
    );
    expect(duplicate).toEqual({
      status: 409,
      text: `{"error":"Request sel-1 already exists (assigned to worker WorkerWithDpRank { worker_id: ${SEL}, dp_rank: 1 })"}`,
    });
    await post("/free", `{"model_name":"${MISTRAL}","request_id":"sel-1"}`, 200);
    await expectRank(MISTRAL, SEL, 1, { decode: 0, prefill: 0, requests: 0 });
  });

  it("shows each catalog worker's lifecycle, endpoint and DP ranks, and why an incomplete one waits", async () => {
    await post("/selection/workers", `{"worker_id":${SEL2},"model_name":"${MISTRAL}","block_size":4}`, 201);
    const line = (model: string, id: string) =>
      page.locator(`section.tracker[data-model="${model}"] .cw[data-worker="${id}"]`);
    const shown = (model: string, id: string) => async () => {
      const at = line(model, id);
      if ((await at.count()) === 0) return null;
      return {
        lifecycle: await at.getAttribute("data-lifecycle"),
        text: await at.locator("span").allTextContents(),
      };
    };
    await expect.poll(shown(MISTRAL, SEL), POLL).toEqual({
      lifecycle: "schedulable",
      text: [SEL, "schedulable", "http://mistral-0:8000", "ranks 0–1"],
    });
    await expect.poll(shown(MISTRAL, SEL2), POLL).toEqual({
      lifecycle: "incomplete",
      text: [SEL2, "incomplete", "no endpoint", "rank 0", "endpoint is required"],
    });
    // A /register'ed worker is in the catalog too, incomplete until a catalog write gives it an endpoint.
    await expect.poll(shown(LLAMA, BIG), POLL).toEqual({
      lifecycle: "incomplete",
      text: [BIG, "incomplete", "no endpoint", "ranks 0–1", "endpoint is required"],
    });
    await post(
      "/selection/workers",
      `{"worker_id":${SEL2},"model_name":"${MISTRAL}","endpoint":"http://mistral-1:8000","block_size":4,"data_parallel_start_rank":2}`,
      201,
    );
    await expect.poll(shown(MISTRAL, SEL2), POLL).toEqual({
      lifecycle: "schedulable",
      text: [SEL2, "schedulable", "http://mistral-1:8000", "rank 2"],
    });
    const mistral = page.locator(`section.tracker[data-model="${MISTRAL}"] .catalog .h`);
    expect(await mistral.textContent()).toBe("Catalog · 2 of 2 schedulable");
    // Four /register'ed workers (incomplete) and the two of the catalog.
    await expect.poll(text("#t-catalog"), POLL).toBe("2 / 6");
  });

  it("draws every lifecycle Dynamo defines, a partition known only to the catalog, and escapes what it shows", async () => {
    // Listings never hold the transitional states (a DELETE passes through them in one step), so the
    // page is given a listing that does, and a record whose texts are markup.
    const model = "catalog-only";
    const record = (id: number, lifecycle: string, extra: object) => ({
      worker_id: id,
      model_name: model,
      routing_group: "default",
      lifecycle,
      endpoint: `http://w${id}`,
      block_size: 4,
      data_parallel_start_rank: null,
      data_parallel_size: null,
      ...extra,
    });
    const listing = [
      record(1, "incomplete", {
        endpoint: '<img src=x onerror="window.__pwned=1">',
        not_schedulable_reasons: ["reconciliation failed: <b>block_size</b> mismatch", "second reason"],
      }),
      record(2, "schedulable", { data_parallel_start_rank: 4, data_parallel_size: 4 }),
      record(3, "draining", {}),
      record(4, "unschedulable", {}),
      record(5, "</span><script>", {}),
    ];
    await page.route("**/selection/workers", (route) =>
      route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(listing) }),
    );
    try {
      const card = page.locator(`section.tracker[data-model="${model}"]`);
      await expect.poll(() => card.locator(".cw").count(), POLL).toBe(5);
      const classes = await card.locator(".cw").evaluateAll((lines) => lines.map((l) => l.className));
      expect(classes).toEqual([
        "cw incomplete",
        "cw schedulable",
        "cw draining",
        "cw unschedulable",
        "cw unknown",
      ]);
      expect(await card.locator('.cw[data-worker="1"] .ep').textContent()).toBe(listing[0]!.endpoint);
      expect(await card.locator('.cw[data-worker="1"] .why').textContent()).toBe(
        "reconciliation failed: <b>block_size</b> mismatch; second reason",
      );
      expect(await card.locator('.cw[data-worker="2"] .dp').textContent()).toBe("ranks 4–7");
      expect(await card.locator('.cw[data-worker="5"] .lc').textContent()).toBe("</span><script>");
      expect(await card.locator(".catalog img, .catalog b, .catalog script").count()).toBe(0);
      expect(await page.evaluate("window.__pwned")).toBeUndefined();
      expect(await card.locator(".meta").textContent()).toContain("no block size yet");
    } finally {
      await page.unroute("**/selection/workers");
    }
    await expect.poll(() => page.locator(`section.tracker[data-model="${model}"]`).count(), POLL).toBe(0);
  });

  it("shows each frontend's lease with its live bookings and a countdown, as text, until it ends", async () => {
    const HTML_OWNER = '<img src=x onerror="window.__pwned=2"></span><script>window.__pwned=3</script>';
    const lease = async (model: string, tenant: string, owner: string) => {
      const res = await call(
        base,
        TOKEN,
        "POST",
        "/leases",
        JSON.stringify({ model_name: model, tenant_id: tenant, owner, ttl_ms: 600_000 }),
      );
      expect(res.status, res.text).toBe(200);
      return (JSON.parse(res.text) as { expires_at_ms: number }).expires_at_ms;
    };
    const owned = (model: string, tenant: string, id: string, at: string, prompt: number[], owner: string) =>
      post(
        "/add",
        JSON.stringify({
          model_name: model,
          tenant_id: tenant,
          request_id: id,
          worker_id: Number(at.split("/")[0]),
          dp_rank: Number(at.split("/")[1]),
          sequence_hashes: prompt,
          new_isl_tokens: 16,
          owner,
        }),
        201,
      );
    const aExpires = await lease(LLAMA, "default", "frontend-a");
    await lease(LLAMA, "default", "frontend-b");
    const htmlExpires = await lease(QWEN, "acme", HTML_OWNER);
    await owned(LLAMA, "default", "own-a1", "7/1", [200, 201, 202, 203], "frontend-a");
    await owned(LLAMA, "default", "own-a2", "7/1", [200, 201, 202, 203, 204, 205], "frontend-a");
    await owned(QWEN, "acme", "own-x1", "3/3", [300, 301], HTML_OWNER);

    const lines = (model: string) => page.locator(`section.tracker[data-model="${model}"] .leases .ls`);
    const shown = (model: string) => () =>
      lines(model).evaluateAll((all) =>
        all.map((l) => ({
          owner: l.querySelector(".own")?.textContent,
          bookings: l.querySelector(".bk")?.textContent,
          data: l.getAttribute("data-bookings"),
        })),
      );
    await expect.poll(shown(LLAMA), POLL).toEqual([
      { owner: "frontend-a", bookings: "2 bookings", data: "2" },
      { owner: "frontend-b", bookings: "0 bookings", data: "0" },
    ]);
    await expect.poll(shown(QWEN), POLL).toEqual([{ owner: HTML_OWNER, bookings: "1 booking", data: "1" }]);
    await expectRank(LLAMA, "7", 1, { decode: 6, prefill: 32, requests: 2 });
    const llama = page.locator(`section.tracker[data-model="${LLAMA}"]`);
    expect(await llama.locator(".leases .h").textContent()).toBe(
      "Frontend leases · 2 live · 2 owned bookings",
    );
    await expect.poll(text("#t-leases"), POLL).toBe("3");

    // The deadline reads as time left, with the absolute time in the title.
    const a = llama.locator('.ls[data-owner="frontend-a"] .exp');
    const left = await a.textContent();
    const parts = /^expires in (?:(\d+) min (\d{2}) s|(\d+) s)$/.exec(left ?? "");
    expect(parts, String(left)).not.toBeNull();
    const seconds = parts![3] !== undefined ? Number(parts![3]) : Number(parts![1]) * 60 + Number(parts![2]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(600);
    expect(await a.getAttribute("title")).toContain(new Date(aExpires).toISOString());
    expect(await llama.locator('.ls[data-owner="frontend-a"]').getAttribute("data-expires")).toBe(
      String(aExpires),
    );
    // The countdown moves on between polls while the listing, unchanged, is not redrawn.
    const drawn = await a.elementHandle();
    await expect.poll(() => a.textContent(), POLL).not.toBe(left);
    expect(await drawn!.evaluate((e) => e.isConnected)).toBe(true);

    // The markup-like owner is text: in the line, its title and its data attribute, and never run.
    const qwen = page.locator(`section.tracker[data-model="${QWEN}"]`);
    expect(await qwen.locator(".ls .own").getAttribute("title")).toBe(`owner ${HTML_OWNER}`);
    expect(await qwen.locator(".ls").getAttribute("data-owner")).toBe(HTML_OWNER);
    expect(await qwen.locator(".ls .exp").getAttribute("title")).toContain(
      new Date(htmlExpires).toISOString(),
    );
    expect(await qwen.locator(".leases img, .leases script").count()).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();

    // Ending a lease frees its bookings, and a later poll drops its line and its count.
    const end = await call(base, TOKEN, "DELETE", `/leases/frontend-a?model_name=${LLAMA}&tenant_id=default`);
    expect(end, end.text).toEqual({ status: 200, text: '{"owner":"frontend-a","freed":2}' });
    await expect
      .poll(shown(LLAMA), POLL)
      .toEqual([{ owner: "frontend-b", bookings: "0 bookings", data: "0" }]);
    await expectRank(LLAMA, "7", 1, { decode: 0, prefill: 0, requests: 0 });
    await expect.poll(text("#t-leases"), POLL).toBe("2");
    const html = await call(
      base,
      TOKEN,
      "DELETE",
      `/leases/${encodeURIComponent(HTML_OWNER)}?model_name=${QWEN}&tenant_id=acme`,
    );
    expect(html.status, html.text).toBe(200);
    await expect.poll(() => qwen.locator(".leases .ls").count(), POLL).toBe(0);
    expect(await qwen.locator(".leases").isHidden()).toBe(true);
    await expect.poll(text("#t-leases"), POLL).toBe("1");
  });

  it("says so in the card when the leases cannot be listed, and the rest of the page stays live", async () => {
    const leasesPath = (url: URL) => url.pathname === "/leases";
    await page.route(leasesPath, (route) =>
      route.fulfill({
        status: 500,
        contentType: "application/json",
        body: '{"error":"tracker unavailable"}',
      }),
    );
    const llama = page.locator(`section.tracker[data-model="${LLAMA}"]`);
    try {
      await expect
        .poll(() => llama.locator(".leases .off").textContent(), POLL)
        .toBe("Leases not shown: /leases: 500 tracker unavailable");
      expect(await llama.locator(".leases .ls").count()).toBe(0);
      await expect.poll(text("#t-leases"), POLL).toBe("0");
      // The ranks still follow bookings meanwhile.
      await add(LLAMA, "default", "r5", "7", 1, hashes(40, 42), 8);
      await expectRank(LLAMA, "7", 1, { decode: 3, prefill: 8, requests: 1 });
      expect(await page.locator("#status").getAttribute("class")).toContain("live");
    } finally {
      await page.unroute(leasesPath);
    }
    await expect.poll(() => llama.locator(".leases .ls").count(), POLL).toBe(1);
    expect(await llama.locator(".leases .off").count()).toBe(0);
    await post("/free", `{"model_name":"${LLAMA}","request_id":"r5"}`, 200);
  });

  it("shows the blocks a rank's engine reports cached beside its load, and · for a rank without events", async () => {
    // One engine batch, as vLLM publishes it: [ts, [BlockStored(2 blocks of 16 tokens)], rank].
    const tokens = Array.from({ length: 32 }, (_, i) => i + 1);
    const batch = encode([
      Date.now() / 1000,
      [["BlockStored", [11, 12], null, tokens, 16, null, "GPU", null]],
      1,
    ]);
    const query = `/kv_events?model_name=${LLAMA}&worker_id=${BIG}&dp_rank=1`;
    const res = await fetch(new URL(query, base), {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/msgpack",
        "x-kv-event-seq": "0",
        "x-kv-event-epoch": "dashboard",
      },
      body: batch,
    });
    expect(res.status, await res.text()).toBe(200);
    const cached = (workerId: string, rank: number) => async () =>
      page
        .locator(
          `section.tracker[data-model="${LLAMA}"] .rank[data-worker="${workerId}"][data-rank="${rank}"] .cached`,
        )
        .textContent();
    await expect.poll(cached(BIG, 1), POLL).toBe("2");
    expect(await cached(BIG, 0)()).toBe("·");
  });

  it("renders without script errors, and leaves a screenshot for people to look at", async () => {
    // Bars glide to new widths and changed values flash: shoot once both have settled.
    await expect.poll(() => page.evaluate("document.getAnimations().length"), POLL).toBe(0);
    mkdirSync(join(ARTIFACT, ".."), { recursive: true });
    await page.screenshot({ path: ARTIFACT, fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
