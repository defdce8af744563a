/**
 * HTTP helpers for the API tests: real requests into the Worker's default export, which forwards to
 * real objects. Bodies are written and answers read with 64-bit integers kept exact, independently of
 * the Worker's own JSON code, so a test can tell a rounded id from an exact one.
 */
import { env, exports } from "cloudflare:workers";
import { expect, it } from "vitest";

/** `exports.default` is typed only when GlobalProps names the main module; its runtime shape is a Fetcher. */
const worker = (exports as unknown as { default: Fetcher }).default;

/** A model name no other test uses: state is shared by every test of a file. */
export function uniqueModel(prefix = "api"): string {
  return `${prefix}-${crypto.randomUUID()}`;
}

export function call(method: string, path: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(new Request(`http://x${path}`, { ...init, method }));
}

type RawJson = (text: string) => unknown;
/** `JSON.rawJSON` (V8 ≥ 11.4) is not in the ES2023 lib types. */
const rawJson = (JSON as unknown as { rawJSON: RawJson }).rawJSON;

/** JSON text with bigints written as exact integer literals. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? rawJson(v.toString()) : v));
}

/** Parses JSON, reading integers beyond 2^53 from their source text as bigint instead of rounding them. */
export function parseExact(text: string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && !Number.isSafeInteger(value) && /^-?\d+$/.test(context?.source ?? "")
      ? BigInt(context!.source!)
      : value;
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
}

/** POSTs `body` as JSON; a string is sent as it is (hand-written or malformed JSON). */
export function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return call("POST", path, {
    body: typeof body === "string" ? body : toJson(body),
    headers: { "content-type": "application/json", ...headers },
  });
}

export function get(
  path: string,
  query: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<Response> {
  const search = new URLSearchParams(query).toString();
  return call("GET", search === "" ? path : `${path}?${search}`, { headers });
}

/** The parsed JSON body of a 200 answer, integers exact. */
export async function okJson(res: Response | Promise<Response>): Promise<unknown> {
  const response = await res;
  const text = await response.text();
  expect({ status: response.status, text }).toMatchObject({ status: 200 });
  expect(response.headers.get("content-type")).toBe("application/json");
  return parseExact(text);
}

/** Asserts Dynamo's success answer for a write: exactly `{"status":"ok"}` with `status`. */
export async function expectOk(res: Response | Promise<Response>, status: 200 | 201): Promise<void> {
  const response = await res;
  expect({ status: response.status, body: await response.text() }).toEqual({
    status,
    body: '{"status":"ok"}',
  });
  expect(response.headers.get("content-type")).toBe("application/json");
}

/**
 * Asserts a JSON error answer: `status`, and a body that is exactly `{"error": <text>}` where the
 * text equals `message` (a string) or matches it (a RegExp). Returns the text.
 */
export async function expectError(
  res: Response | Promise<Response>,
  status: number,
  message: string | RegExp,
): Promise<string> {
  const response = await res;
  const text = await response.text();
  expect({ status: response.status, text }).toMatchObject({ status });
  expect(response.headers.get("content-type")).toBe("application/json");
  const body = JSON.parse(text) as unknown;
  expect(body).toEqual({ error: expect.any(String) });
  const error = (body as { error: string }).error;
  if (typeof message === "string") expect(error).toBe(message);
  else expect(error).toMatch(message);
  return error;
}

export interface Scope {
  model: string;
  tenant?: string;
}

function scopeQuery(scope: Scope): Record<string, string> {
  return { model_name: scope.model, tenant_id: scope.tenant ?? "default" };
}

function scopeBody(scope: Scope): Record<string, string> {
  return scope.tenant === undefined
    ? { model_name: scope.model }
    : { model_name: scope.model, tenant_id: scope.tenant };
}

export function register(
  scope: Scope,
  workerId: number | bigint,
  options: { blockSize?: number; dpStart?: number; dpSize?: number } = {},
): Promise<Response> {
  const { blockSize = 16, dpStart = 0, dpSize = 1 } = options;
  return post("/register", {
    ...scopeBody(scope),
    worker_id: workerId,
    block_size: blockSize,
    dp_start: dpStart,
    dp_size: dpSize,
  });
}

export function add(
  scope: Scope,
  requestId: string,
  workerId: number | bigint,
  dpRank: number,
  hashes: (number | bigint)[],
  newIslTokens?: number,
): Promise<Response> {
  return post("/add", {
    ...scopeBody(scope),
    request_id: requestId,
    worker_id: workerId,
    dp_rank: dpRank,
    sequence_hashes: hashes,
    new_isl_tokens: newIslTokens,
  });
}

export function requestOp(
  path: "/prefill_complete" | "/free",
  scope: Scope,
  requestId: string,
): Promise<Response> {
  return post(path, { ...scopeBody(scope), request_id: requestId });
}

export function potentialLoads(
  scope: Scope,
  hashes: (number | bigint)[],
  newIslTokens?: number,
): Promise<Response> {
  return post("/potential_loads", {
    ...scopeBody(scope),
    sequence_hashes: hashes,
    new_isl_tokens: newIslTokens,
  });
}

export function workersOf(scope: Scope): Promise<unknown> {
  return okJson(get("/workers", scopeQuery(scope)));
}

export function loadsOf(scope: Scope): Promise<unknown> {
  return okJson(get("/loads", scopeQuery(scope)));
}

/** The raw text of a tracker's `/workers` and `/loads`: what a bad call must leave as it was. */
export async function stateText(scope: Scope): Promise<string> {
  const workers = await get("/workers", scopeQuery(scope));
  const loads = await get("/loads", scopeQuery(scope));
  expect([workers.status, loads.status]).toEqual([200, 200]);
  return `${await workers.text()}\n${await loads.text()}`;
}

/** UTF-8 byte order, the order Dynamo's Rust strings sort in. */
export function compareBytes(a: string, b: string): number {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]! - y[i]!;
  }
  return x.length - y.length;
}

/** The live-request age limit these tests run with (vitest.config.ts). */
export const EXPIRY_MS = Number(env.REQUEST_EXPIRY_SECONDS) * 1000;
/** Tests here make hundreds of calls, and the machine is shared: more time than the default 30 s. */
export const SLOW_TEST_MS = 180_000;

/**
 * `it` for a test that books requests and then reads loads, with {@link SLOW_TEST_MS}: no request
 * expires before it fails for its timeout ({@link EXPIRY_MS} is longer), so its loads never depend on
 * the machine's speed.
 */
export function itBooking(name: string, block: () => Promise<void>, timeout = SLOW_TEST_MS): void {
  if (EXPIRY_MS <= timeout)
    throw new Error(`requests expire in ${EXPIRY_MS} ms, within the test's ${timeout} ms`);
  it(name, block, timeout);
}

/**
 * A tracker with two workers and one live request in prefill, for bad calls that must change
 * nothing: after each, `/workers` and `/loads` must read exactly as after setup, and the request
 * must still be live (adding it again is refused with 409).
 */
export class SeededTracker {
  private workers = "";
  private loads = "";
  private constructor(readonly model: string) {}

  static async create(): Promise<SeededTracker> {
    const tracker = new SeededTracker(uniqueModel());
    await expectOk(register(tracker.scope, 1, { dpSize: 2 }), 201);
    await expectOk(register(tracker.scope, 2), 201);
    tracker.workers = await tracker.read("/workers");
    await expectOk(add(tracker.scope, "live", 1, 1, [1, 2, 3], 8), 201);
    tracker.loads = await tracker.read("/loads");
    await tracker.expectLive();
    expect(tracker.loads).toContain(
      '"worker_id":1,"dp_rank":1,"active_prefill_tokens":8,"active_decode_blocks":3',
    );
    expect(tracker.loads).toContain('"worker_id":2,"dp_rank":0,"active_prefill_tokens":0');
    return tracker;
  }

  get scope(): Scope {
    return { model: this.model };
  }

  /** Runs `badCall` (which asserts its own answer), then asserts the tracker is exactly as set up. */
  async unchangedBy(label: string, badCall: () => Promise<unknown>): Promise<void> {
    await badCall();
    expect(await this.read("/loads"), `loads after ${label}`).toBe(this.loads);
    expect(await this.read("/workers"), `workers after ${label}`).toBe(this.workers);
    await this.expectLive();
  }

  private async read(path: "/workers" | "/loads"): Promise<string> {
    const res = await get(path, scopeQuery(this.scope));
    expect(res.status).toBe(200);
    return res.text();
  }

  /** Request `live` is still booked: adding it again is refused, and changes nothing. */
  private async expectLive(): Promise<void> {
    await expectError(
      await add(this.scope, "live", 1, 1, [1, 2, 3], 8),
      409,
      "Request live already exists (assigned to worker WorkerWithDpRank { worker_id: 1, dp_rank: 1 })",
    );
  }
}
