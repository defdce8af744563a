import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Result } from "../../durable-objects/types";
import app from "../../src/app";
import type { Env } from "../../src/env";
import {
  backoffMs,
  IDEMPOTENT_TRACKER_METHODS,
  isRetryable,
  retryingStub,
  withRetries,
} from "../../src/http/retry";

/** An infrastructure error as the platform throws it (partyserver's fake-stub pattern). */
function platformError(
  flags: { retryable?: boolean; overloaded?: boolean },
  message = "Network connection lost.",
) {
  return Object.assign(new Error(message), { remote: true, ...flags });
}
const transient = () => platformError({ retryable: true });
const overloaded = () =>
  platformError(
    { retryable: true, overloaded: true },
    "Durable Object is overloaded. Too many requests queued.",
  );

const noSleep = { sleep: async () => {} };

afterEach(() => {
  vi.restoreAllMocks();
});

describe("which errors are retried", () => {
  it("retries only errors marked retryable and not overloaded", () => {
    expect(isRetryable(transient())).toBe(true);
    expect(isRetryable(overloaded())).toBe(false);
    expect(isRetryable(platformError({ retryable: false }))).toBe(false);
    expect(isRetryable(new Error("boom"))).toBe(false);
    expect(isRetryable({ retryable: "true" })).toBe(false);
    expect(isRetryable(undefined)).toBe(false);
  });

  it("backs off with full jitter, capped at 800 ms", () => {
    const top = { random: () => 0.999_999 };
    expect([1, 2, 3, 4, 5, 9].map((n) => backoffMs(n, top))).toEqual([99, 199, 399, 799, 799, 799]);
    expect(backoffMs(3, { random: () => 0 })).toBe(0);
    expect(backoffMs(2, { random: () => 0.5 })).toBe(100);
  });
});

describe("withRetries", () => {
  it("makes a fresh stub for every attempt and stops at the first success", async () => {
    const stubs: { n: number }[] = [];
    const delays: number[] = [];
    const result = await withRetries(
      () => {
        const stub = { n: stubs.length };
        stubs.push(stub);
        return stub;
      },
      async (stub) => {
        if (stub.n < 2) throw transient();
        return `ok from ${stub.n}`;
      },
      { random: () => 0.5, sleep: async (ms) => void delays.push(ms) },
    );
    expect(result).toBe("ok from 2");
    expect(stubs).toHaveLength(3);
    expect(new Set(stubs).size).toBe(3);
    expect(delays).toEqual([50, 100]);
  });

  it("gives up after three attempts with the last error", async () => {
    let attempts = 0;
    const error = await withRetries(
      () => ({}),
      async () => {
        attempts++;
        throw transient();
      },
      noSleep,
    ).catch((e: unknown) => e);
    expect(attempts).toBe(3);
    expect(isRetryable(error)).toBe(true);
  });

  it("never retries an overloaded object or an error that is not retryable", async () => {
    for (const make of [overloaded, () => new Error("boom"), () => platformError({ retryable: false })]) {
      let attempts = 0;
      const error = await withRetries(
        () => ({}),
        async () => {
          attempts++;
          throw make();
        },
        noSleep,
      ).catch((e: unknown) => e);
      expect(attempts).toBe(1);
      expect(error).toBeInstanceOf(Error);
    }
  });
});

describe("retryingStub", () => {
  function namespace(failures: number) {
    const made: string[] = [];
    const calls: string[] = [];
    const stubOf = () => {
      const id = `stub${made.length}`;
      made.push(id);
      return {
        id,
        async free(requestId: string) {
          calls.push(`${id}.free(${requestId})`);
          if (calls.length <= failures) throw transient();
          return { ok: true };
        },
        async add() {
          calls.push(`${id}.add`);
          throw transient();
        },
      };
    };
    return { made, calls, stub: retryingStub(stubOf, IDEMPOTENT_TRACKER_METHODS, noSleep) };
  }

  it("retries an idempotent method on new stubs, and only that call", async () => {
    const { made, calls, stub } = namespace(2);
    expect(await stub.free("r")).toEqual({ ok: true });
    expect(calls).toEqual(["stub0.free(r)", "stub1.free(r)", "stub2.free(r)"]);
    expect(made).toHaveLength(3);
    expect(stub.id).toBe("stub0");
  });

  it("calls a method that is not idempotent once, on the first stub", async () => {
    const { made, calls, stub } = namespace(0);
    const error = await stub.add().catch((e: unknown) => e);
    expect(isRetryable(error)).toBe(true);
    expect(calls).toEqual(["stub0.add"]);
    expect(made).toHaveLength(1);
  });

  it("names exactly the reads, prefill_complete, free, a lease renewal and KV events as idempotent", () => {
    expect([...IDEMPOTENT_TRACKER_METHODS].sort()).toEqual([
      "cacheDump",
      "catalogList",
      "free",
      "hasReservation",
      "kvEvents",
      "kvStreams",
      "listLeases",
      "listLoads",
      "listWorkers",
      "metrics",
      "overlapScores",
      "potentialLoads",
      "prefillComplete",
      "renewLease",
      "replicaStatus",
      "reservationPrefillComplete",
      "routingStats",
      "rowsWritten",
      "selectionLoads",
      "selectionPotentialLoads",
    ]);
    // A retried select could choose again, a booking or output block land twice, an end answer 404.
    const writes = [
      "endLease",
      "select",
      "reserve",
      "reservationOutputBlock",
      "endReservation",
      "catalogUpsert",
      "catalogPatch",
      "catalogDelete",
    ];
    for (const method of ["add", "register", "unregister", "route", "batch", "replicate", ...writes]) {
      expect(IDEMPOTENT_TRACKER_METHODS.has(method)).toBe(false);
    }
  });
});

describe("routes over a failing object", () => {
  beforeEach(() => {
    // The error handler logs every infrastructure failure as one JSON line; keep the run quiet.
    vi.spyOn(console, "error").mockImplementation(() => {});
  });

  /** A namespace whose stubs fail with `errors` in turn (then answer `answer`), counting stubs and calls. */
  function failingEnv(errors: Error[], answer: unknown) {
    let stubs = 0;
    const calls: string[] = [];
    const stub = () => {
      stubs++;
      return new Proxy(
        {},
        {
          get: (_target, method: string) => async () => {
            calls.push(method);
            const error = errors.shift();
            if (error) throw error;
            return answer;
          },
        },
      );
    };
    const env = {
      TRACKER: { getByName: stub },
      DIRECTORY: { getByName: stub },
      REPLICAS: "primary",
      REQUEST_EXPIRY_SECONDS: "300",
    } as unknown as Env;
    return { env, calls, stubs: () => stubs };
  }

  const OK: Result = { ok: true };
  const post = (path: string, body: object, env: Env) =>
    app.request(
      path,
      { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } },
      env,
    );
  const tracker = { model_name: "m", tenant_id: "t" };

  it("answers a free that failed twice transiently with 200, after three stubs", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const { env, calls, stubs } = failingEnv([transient(), transient()], OK);
    const res = await post("/free", { ...tracker, request_id: "r" }, env);
    expect(res.status).toBe(200);
    expect(calls).toEqual(["free", "free", "free"]);
    expect(stubs()).toBe(3);
  });

  it("reads /loads and /potential_loads through transient failures", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const loads = failingEnv([transient()], []);
    const res = await app.request("/loads?model_name=m&tenant_id=t", {}, loads.env);
    expect([res.status, await res.text()]).toEqual([200, "[]"]);
    expect(loads.calls).toEqual(["listLoads", "listLoads"]);
    const potential = failingEnv([transient(), transient()], { ok: true, loads: [] });
    const answer = await post("/potential_loads", { ...tracker, sequence_hashes: [1] }, potential.env);
    expect(answer.status).toBe(200);
    expect(potential.calls).toEqual(["potentialLoads", "potentialLoads", "potentialLoads"]);
  });

  it("answers 503 with Retry-After once three attempts have failed", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const { env, calls } = failingEnv([transient(), transient(), transient(), transient()], OK);
    const res = await post("/prefill_complete", { ...tracker, request_id: "r" }, env);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({ error: "tracker temporarily unavailable; retry later" });
    expect(calls).toHaveLength(3);
  });

  it("answers an overloaded object with 503 and Retry-After at once, without retrying", async () => {
    const { env, calls } = failingEnv([overloaded()], OK);
    const res = await post("/free", { ...tracker, request_id: "r" }, env);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({ error: "tracker overloaded; retry later" });
    expect(calls).toEqual(["free"]);
  });

  it("never retries add, register, unregister or route: 503 after one attempt", async () => {
    const cases: [string, object][] = [
      ["/add", { ...tracker, request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [] }],
      ["/register", { ...tracker, worker_id: 1, block_size: 16, dp_start: 0, dp_size: 1 }],
      ["/unregister", { ...tracker, worker_id: 1 }],
      ["/route", { ...tracker, request_id: "r", sequence_hashes: [] }],
    ];
    for (const [path, body] of cases) {
      const { env, calls, stubs } = failingEnv([transient(), transient()], OK);
      const res = await post(path, body, env);
      expect([path, res.status, res.headers.get("retry-after")]).toEqual([path, 503, "1"]);
      expect([path, calls.length, stubs()]).toEqual([path, 1, 1]);
    }
  });

  it("answers an error that is not retryable with 500, after one attempt", async () => {
    const { env, calls } = failingEnv([new Error("boom")], OK);
    const res = await post("/free", { ...tracker, request_id: "r" }, env);
    expect(res.status).toBe(500);
    expect(calls).toEqual(["free"]);
  });
});
