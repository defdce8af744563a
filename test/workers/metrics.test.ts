import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parsePrometheus, select, sampleValue } from "./prometheus-text";
import { setClock, trackerStub } from "./helpers";

/** `exports.default` is typed only when GlobalProps names the main module; at runtime it is a Fetcher. */
const worker = (exports as unknown as { default: Fetcher }).default;

function post(path: string, body: string): Promise<Response> {
  return worker.fetch(
    new Request(`http://x${path}`, { method: "POST", body, headers: { "content-type": "application/json" } }),
  );
}

async function scrape(model: string) {
  const res = await worker.fetch(
    new Request(`http://x/metrics?${new URLSearchParams({ model_name: model })}`),
  );
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePrometheus(await res.text());
}

/** `slot_tracker_requests_total` of one route and status (0 before the first such call). */
function requests(parsed: ReturnType<typeof parsePrometheus>, route: string, status: number): number {
  return sampleValue(parsed, "slot_tracker_requests_total", { route, status: String(status) }) ?? 0;
}

const U64_MAX = "18446744073709551615";

describe("GET /metrics", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("reports per-rank gauges equal to /loads for the same state, worker ids exact", async () => {
    const m = `metrics-${crypto.randomUUID()}`;
    const t = "acme";
    // u64::MAX would round to 18446744073709552000 through a double.
    expect(
      (
        await post(
          "/register",
          `{"worker_id":${U64_MAX},"model_name":"${m}","tenant_id":"${t}","block_size":4,"dp_start":0,"dp_size":2}`,
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await post(
          "/register",
          `{"worker_id":7,"model_name":"${m}","tenant_id":"${t}","block_size":4,"dp_start":3,"dp_size":1,"worker_type":"prefill"}`,
        )
      ).status,
    ).toBe(201);
    const adds = [
      `{"model_name":"${m}","tenant_id":"${t}","request_id":"a","worker_id":${U64_MAX},"dp_rank":1,"sequence_hashes":[1,2,3],"new_isl_tokens":12}`,
      `{"model_name":"${m}","tenant_id":"${t}","request_id":"b","worker_id":${U64_MAX},"dp_rank":1,"sequence_hashes":[1,2,9],"new_isl_tokens":5}`,
      `{"model_name":"${m}","tenant_id":"${t}","request_id":"c","worker_id":7,"dp_rank":3,"sequence_hashes":[-1],"new_isl_tokens":8}`,
    ];
    for (const body of adds) expect((await post("/add", body)).status).toBe(201);
    expect(
      (await post("/prefill_complete", `{"model_name":"${m}","tenant_id":"${t}","request_id":"b"}`)).status,
    ).toBe(200);

    const loadsText = await (await worker.fetch(new Request(`http://x/loads?model_name=${m}`))).text();
    // Read the ids from the text: JSON.parse would round u64::MAX.
    const rows = [
      ...loadsText.matchAll(
        /"worker_id":(\d+),"dp_rank":(\d+),"active_prefill_tokens":(\d+),"active_decode_blocks":(\d+)/g,
      ),
    ];
    expect(rows.map((r) => `${r[1]}/${r[2]}`)).toEqual([`7/3`, `${U64_MAX}/0`, `${U64_MAX}/1`]);

    const parsed = await scrape(m);
    const tracker = { replica: "primary", model: m, tenant: t };
    for (const [, worker_id, dp_rank, prefill, decode] of rows as unknown as string[][]) {
      const rank = { ...tracker, worker_id: worker_id!, dp_rank: dp_rank! };
      expect(sampleValue(parsed, "slot_tracker_active_decode_blocks", rank)).toBe(Number(decode));
      expect(sampleValue(parsed, "slot_tracker_active_prefill_tokens", rank)).toBe(Number(prefill));
      const type = worker_id === "7" ? "prefill" : "decode";
      expect(
        sampleValue(parsed, "dynamo_frontend_worker_active_decode_blocks", { ...rank, worker_type: type }),
      ).toBe(Number(decode));
      expect(
        sampleValue(parsed, "dynamo_frontend_worker_active_prefill_tokens", { ...rank, worker_type: type }),
      ).toBe(Number(prefill));
    }
    // Exactly the ranks /loads lists, no more.
    expect(select(parsed, "slot_tracker_active_decode_blocks")).toHaveLength(3);
    expect(
      sampleValue(parsed, "slot_tracker_active_decode_blocks", {
        ...tracker,
        worker_id: U64_MAX,
        dp_rank: "1",
      }),
    ).toBe(4);
    expect(
      sampleValue(parsed, "slot_tracker_active_prefill_tokens", {
        ...tracker,
        worker_id: U64_MAX,
        dp_rank: "1",
      }),
    ).toBe(12);
    expect(sampleValue(parsed, "slot_tracker_live_requests", tracker)).toBe(3);
    expect(sampleValue(parsed, "slot_tracker_registered_workers", tracker)).toBe(2);
    expect(sampleValue(parsed, "slot_tracker_sqlite_rows_written_total", tracker)).toBeGreaterThan(0);
    expect(parsed.types.get("slot_tracker_active_decode_blocks")).toBe("gauge");
    expect(parsed.types.get("slot_tracker_requests_total")).toBe("counter");
  });

  it("counts operations by route and status, from the tracker object", async () => {
    const m = `metrics-${crypto.randomUUID()}`;
    await post("/register", `{"worker_id":1,"model_name":"${m}","block_size":4,"dp_start":0,"dp_size":1}`);
    const add = (id: string, rank = 0) =>
      post(
        "/add",
        `{"model_name":"${m}","request_id":"${id}","worker_id":1,"dp_rank":${rank},"sequence_hashes":[1]}`,
      );
    const before = await scrape(m);
    expect(requests(before, "/register", 201)).toBe(1);
    expect(requests(before, "/add", 201)).toBe(0);

    expect((await add("r1")).status).toBe(201);
    expect((await add("r2")).status).toBe(201);
    expect((await add("r1")).status).toBe(409);
    expect((await add("r3", 5)).status).toBe(404);
    expect((await post("/free", `{"model_name":"${m}","request_id":"r1"}`)).status).toBe(200);
    expect((await post("/prefill_complete", `{"model_name":"${m}","request_id":"nope"}`)).status).toBe(404);
    // Refused by the Worker's validation: never reaches the object, so not counted there.
    expect((await post("/add", `{"model_name":"${m}","request_id":"x"}`)).status).toBeGreaterThanOrEqual(400);

    const after = await scrape(m);
    expect(requests(after, "/add", 201)).toBe(2);
    expect(requests(after, "/add", 409)).toBe(1);
    expect(requests(after, "/add", 404)).toBe(1);
    expect(requests(after, "/free", 200)).toBe(1);
    expect(requests(after, "/prefill_complete", 404)).toBe(1);
    expect(requests(after, "/add", 400) + requests(after, "/add", 422)).toBe(0);
    expect(sampleValue(after, "slot_tracker_live_requests", { model: m })).toBe(1);
  });

  it("counts expiries as the alarm removes requests", async () => {
    // The clock is the test's, a day ahead (so the real alarm never fires during the test), and is
    // moved past the request's deadline before the alarm runs.
    const t0 = Date.now() + 86_400_000;
    const setNow = setClock(t0);
    const m = `metrics-${crypto.randomUUID()}`;
    await post("/register", `{"worker_id":1,"model_name":"${m}","block_size":4,"dp_start":0,"dp_size":1}`);
    await post(
      "/add",
      `{"model_name":"${m}","request_id":"old","worker_id":1,"dp_rank":0,"sequence_hashes":[1]}`,
    );
    expect(sampleValue(await scrape(m), "slot_tracker_expired_requests_total", { model: m })).toBe(0);
    setNow(t0 + Number(env.REQUEST_EXPIRY_SECONDS) * 1000 + 1);
    const stub = trackerStub({ model: m, tenant: "default", replica: "primary" });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(sampleValue(await scrape(m), "slot_tracker_expired_requests_total", { model: m })).toBe(1);
    expect(sampleValue(await scrape(m), "slot_tracker_live_requests", { model: m })).toBe(0);
  });

  it("reports live leases, bookings by owner with the owner escaped, and bookings freed by a delete and a lapse", async () => {
    // The clock is the test's, a day ahead (so the real alarm never fires during the test), and is
    // moved past a lease's deadline before the alarm runs.
    const t0 = Date.now() + 86_400_000;
    const setNow = setClock(t0);
    const m = `metrics-${crypto.randomUUID()}`;
    const tracker = { replica: "primary", model: m, tenant: "default" };
    const odd = 'fe"1\\pod\nblue';
    await post("/register", `{"worker_id":1,"model_name":"${m}","block_size":4,"dp_start":0,"dp_size":2}`);
    const lease = (owner: string, ttl: number) =>
      post("/leases", JSON.stringify({ model_name: m, owner, ttl_ms: ttl }));
    for (const [owner, ttl] of [
      [odd, 10_000],
      ["fe-2", 60_000],
      ["idle", 60_000],
    ] as const) {
      expect((await lease(owner, ttl)).status).toBe(200);
    }
    const add = (id: string, owner?: string) =>
      post(
        "/add",
        JSON.stringify({
          model_name: m,
          request_id: id,
          worker_id: 1,
          dp_rank: 0,
          sequence_hashes: [1],
          owner,
        }),
      );
    for (const [id, owner] of [
      ["a", odd],
      ["b", odd],
      ["c", "fe-2"],
      ["plain", undefined],
    ] as const) {
      expect((await add(id, owner)).status).toBe(201);
    }

    const res = await worker.fetch(new Request(`http://x/metrics?${new URLSearchParams({ model_name: m })}`));
    const text = await res.text();
    expect(text).toContain(`owner="fe\\"1\\\\pod\\nblue"} 2\n`);
    const parsed = parsePrometheus(text);
    expect(parsed.types.get("slot_tracker_live_leases")).toBe("gauge");
    expect(parsed.types.get("slot_tracker_owned_bookings")).toBe("gauge");
    expect(parsed.types.get("slot_tracker_lease_freed_bookings_total")).toBe("counter");
    expect(sampleValue(parsed, "slot_tracker_live_leases", tracker)).toBe(3);
    // One series per owner with live bookings here: a lease that holds none has no series.
    expect(
      select(parsed, "slot_tracker_owned_bookings", tracker).map((s) => [s.labels.owner, s.value]),
    ).toEqual([
      [odd, 2],
      ["fe-2", 1],
    ]);
    expect(sampleValue(parsed, "slot_tracker_lease_freed_bookings_total", tracker)).toBe(0);

    // A delete frees at once.
    const ended = await worker.fetch(
      new Request(`http://x/leases/${encodeURIComponent("fe-2")}?model_name=${m}`, { method: "DELETE" }),
    );
    expect(await ended.json()).toEqual({ owner: "fe-2", freed: 1 });
    const afterDelete = await scrape(m);
    expect(sampleValue(afterDelete, "slot_tracker_live_leases", tracker)).toBe(2);
    expect(sampleValue(afterDelete, "slot_tracker_owned_bookings", { ...tracker, owner: "fe-2" })).toBe(
      undefined,
    );
    expect(sampleValue(afterDelete, "slot_tracker_lease_freed_bookings_total", tracker)).toBe(1);

    // The odd owner's lease lapses and the alarm frees its two bookings; the unowned one stays.
    setNow(t0 + 10_000);
    expect(await runDurableObjectAlarm(trackerStub(tracker))).toBe(true);
    const afterLapse = await scrape(m);
    expect(sampleValue(afterLapse, "slot_tracker_live_leases", tracker)).toBe(1);
    expect(select(afterLapse, "slot_tracker_owned_bookings", tracker)).toEqual([]);
    expect(sampleValue(afterLapse, "slot_tracker_lease_freed_bookings_total", tracker)).toBe(3);
    expect(sampleValue(afterLapse, "slot_tracker_expired_requests_total", tracker)).toBe(0);
    expect(sampleValue(afterLapse, "slot_tracker_live_requests", tracker)).toBe(1);
  });

  it("escapes backslash, quote and line feed in label values, and the parser reads them back", async () => {
    const m = `we"ird\\mod\nel-${crypto.randomUUID()}`;
    const body = JSON.stringify({
      worker_id: 3,
      model_name: m,
      tenant_id: 'ten"ant',
      block_size: 4,
      dp_start: 0,
      dp_size: 1,
    });
    expect((await post("/register", body)).status).toBe(201);
    const res = await worker.fetch(new Request(`http://x/metrics?${new URLSearchParams({ model_name: m })}`));
    const text = await res.text();
    expect(text).toContain(`model="we\\"ird\\\\mod\\nel-`);
    const parsed = parsePrometheus(text);
    expect(sampleValue(parsed, "slot_tracker_registered_workers", { model: m, tenant: 'ten"ant' })).toBe(1);
  });

  it("states its fan-out bound and what this scrape read", async () => {
    const m = `metrics-${crypto.randomUUID()}`;
    await post("/register", `{"worker_id":1,"model_name":"${m}","block_size":4,"dp_start":0,"dp_size":1}`);
    const parsed = await scrape(m);
    expect(parsed.comments.join("\n")).toMatch(
      /1 of 1 trackers scraped \(at most 256 per scrape, 16 in flight/,
    );
    expect(sampleValue(parsed, "slot_tracker_scrape_trackers")).toBe(1);
    expect(sampleValue(parsed, "slot_tracker_scrape_trackers_omitted")).toBe(0);
    expect(sampleValue(parsed, "slot_tracker_scrape_errors")).toBe(0);
    // A filter for another model shows none of this one's series.
    const other = await scrape(`metrics-${crypto.randomUUID()}`);
    expect(other.samples.filter((s) => s.labels.model === m)).toEqual([]);
  });
});
