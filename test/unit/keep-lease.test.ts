/**
 * `keepLease` on fake timers and a fake fetch: it renews at once and every ttl/3, retries a failed
 * renewal at the next tick and reports it, never overlaps renewals, and on `stop()` renews no more
 * and deletes the lease once, swallowing nothing but a 404 and rejecting never.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { keepLease, leaseClient, SlotTrackerError, selectionClient } from "../../src/client";

interface Seen {
  method: string;
  url: string;
  body: unknown;
}

/** A fetch answering renewals with `renewal(n)` (n counts from 1) and deletions with `deletion`. */
function fakeFetch(renewal: (n: number) => Response | Promise<Response>, deletion = () => reply(200, {})) {
  const seen: Seen[] = [];
  let renewals = 0;
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const text = await request.text();
    seen.push({ method: request.method, url: request.url, body: text === "" ? undefined : JSON.parse(text) });
    return request.method === "DELETE" ? deletion() : renewal(++renewals);
  };
  return { fetch: fetch as typeof globalThis.fetch, seen };
}

const reply = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const granted = (n: number) => reply(200, { owner: "fe/1", expires_at_ms: 1_000 * n });
const lease = { model_name: "m", tenant_id: "t", owner: "fe/1", ttl_ms: 3_000 };

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("keepLease", () => {
  it("renews at once, then every ttl/3, with the lease's own body", async () => {
    const { fetch, seen } = fakeFetch(granted);
    const keeper = keepLease(leaseClient("http://t", { fetch }), lease);
    await keeper.ready;
    expect(keeper.expiresAtMs).toBe(1_000);
    await vi.advanceTimersByTimeAsync(999);
    expect(seen.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen.length).toBe(2);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(seen.length).toBe(4);
    expect(seen.every((s) => s.method === "POST" && s.url === "http://t/leases")).toBe(true);
    expect(seen[0]!.body).toEqual(lease);
    expect(keeper.expiresAtMs).toBe(4_000);
    await keeper.stop();
  });

  it("reports a failed renewal and retries it at the next tick", async () => {
    const errors: unknown[] = [];
    const { fetch, seen } = fakeFetch((n) =>
      n === 2 ? reply(503, { error: "tracker overloaded" }) : granted(n),
    );
    const keeper = keepLease(leaseClient("http://t", { fetch }), lease, { onError: (e) => errors.push(e) });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SlotTrackerError);
    expect((errors[0] as SlotTrackerError).status).toBe(503);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen.length).toBe(3);
    expect(keeper.expiresAtMs).toBe(3_000);
    await keeper.stop();
  });

  it("survives a fetch that throws and a callback that throws", async () => {
    let calls = 0;
    const { fetch, seen } = fakeFetch((n) => {
      if (n === 1) throw new TypeError("network down");
      return granted(n);
    });
    const keeper = keepLease(leaseClient("http://t", { fetch }), lease, {
      onError: () => {
        calls++;
        throw new Error("callback broke");
      },
    });
    await vi.advanceTimersByTimeAsync(1_000);
    await keeper.ready;
    expect([calls, seen.length, keeper.expiresAtMs]).toEqual([1, 2, 2_000]);
    await keeper.stop();
  });

  it("never overlaps renewals: a slow one delays the next tick", async () => {
    let release: (() => void) | undefined;
    const { fetch, seen } = fakeFetch(
      (n) =>
        new Promise<Response>((resolve) => {
          release = () => resolve(granted(n));
        }),
    );
    const keeper = keepLease(leaseClient("http://t", { fetch }), lease);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(seen.length).toBe(1);
    release!();
    await vi.advanceTimersByTimeAsync(0);
    expect(seen.length).toBe(2);
    const stopped = keeper.stop();
    release!();
    await stopped;
    expect(seen.map((s) => s.method)).toEqual(["POST", "POST", "DELETE"]);
  });

  it("stop() renews no more and deletes the lease once, its owner encoded and its tracker in the query", async () => {
    const { fetch, seen } = fakeFetch(granted);
    const keeper = keepLease(leaseClient("http://t", { fetch }), lease);
    await keeper.ready;
    await Promise.all([keeper.stop(), keeper.stop()]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ["POST", "http://t/leases"],
      ["DELETE", "http://t/leases/fe%2F1?model_name=m&tenant_id=t"],
    ]);
  });

  it("stop() takes a 404 (lease already gone) quietly, and reports any other failure without rejecting", async () => {
    for (const [status, reported] of [
      [404, 0],
      [500, 1],
    ] as const) {
      const errors: unknown[] = [];
      const { fetch } = fakeFetch(granted, () => reply(status, { error: "x" }));
      const keeper = keepLease(leaseClient("http://t", { fetch }), lease, { onError: (e) => errors.push(e) });
      await keeper.ready;
      await expect(keeper.stop()).resolves.toBeUndefined();
      expect(errors).toHaveLength(reported);
    }
  });

  it("keeps a selection API lease through selectionClient", async () => {
    const { fetch, seen } = fakeFetch(granted);
    const keeper = keepLease(selectionClient("http://t", { fetch }), {
      routing_group: "g",
      owner: "fe/1",
      ttl_ms: 1_500,
    });
    await vi.advanceTimersByTimeAsync(500);
    await keeper.stop();
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ["POST", "http://t/selection/leases"],
      ["POST", "http://t/selection/leases"],
      ["DELETE", "http://t/selection/leases/fe%2F1?routing_group=g"],
    ]);
  });
});
