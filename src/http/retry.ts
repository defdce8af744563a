/**
 * Retries of Worker → object calls, as `cloudflare/agents` and `partyserver` do them: only errors the
 * platform marks `retryable` and not `overloaded` (retrying an overloaded object makes it worse; the
 * client gets 503 with Retry-After instead), at most {@link ATTEMPTS} attempts, a fresh stub for each
 * (a stub that threw may stay broken), full-jitter backoff between them.
 *
 * Only idempotent calls are retried, because a retryable error says nothing about whether the call
 * ran: a reset can land between the object's write and its answer. Reads are idempotent, and so are
 * `prefillComplete` (a repeat is a no-op answered 200) and `free` (freeing a freed or unknown id is
 * a 200 no-op). `add`, `register`, `unregister`, `route` and batches are not: a second attempt after
 * a first that landed would answer 409 or 404 for a change that was made, so they fail over to the
 * client (503, see `errors.ts`), whose retry gets that answer knowingly.
 */

export const ATTEMPTS = 3;
export const BASE_DELAY_MS = 100;
export const MAX_DELAY_MS = 800;

/** Tracker RPC methods that are safe to call again after an attempt that may have run. */
export const IDEMPOTENT_TRACKER_METHODS: ReadonlySet<string> = new Set([
  "listWorkers",
  "listLoads",
  "potentialLoads",
  "prefillComplete",
  "free",
  "replicaStatus",
  "routingStats",
  "metrics",
  "rowsWritten",
  "listLeases",
  // A renewal repeated only moves the deadline on by the call's own delay, and never shortens it.
  "renewLease",
  // The selection API's reads, and its one repeatable write: a second prefill completion is a success.
  "hasReservation",
  "reservationPrefillComplete",
  "selectionLoads",
  "selectionPotentialLoads",
  "overlapScores",
  "cacheDump",
  // A sequence number applied once is acknowledged as a repeat, so a retried call changes nothing more.
  "kvEvents",
  "kvStreams",
  "catalogList",
]);

type Method = (...args: unknown[]) => Promise<unknown>;

/** Directory RPC methods that are safe to call again (`setTracker` is the objects' own, not the Worker's). */
export const IDEMPOTENT_DIRECTORY_METHODS: ReadonlySet<string> = new Set([
  "listTrackers",
  "listPartitions",
  "workerPartitions",
]);

export interface RetryOptions {
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Uniform in [0, 1): the jitter source. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** What the platform says may be retried: `retryable`, and not `overloaded`. */
export function isRetryable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { retryable, overloaded } = error as { retryable?: unknown; overloaded?: unknown };
  return retryable === true && overloaded !== true;
}

/** Full jitter: uniform in [0, min(max, base × 2^(attempt − 1))) after failed attempt `attempt` (1-based). */
export function backoffMs(attempt: number, options: RetryOptions = {}): number {
  const { baseDelayMs = BASE_DELAY_MS, maxDelayMs = MAX_DELAY_MS, random = Math.random } = options;
  return Math.floor(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1)));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `call` on a stub from `stubOf`, retried on a fresh stub while the error is retryable. */
export async function withRetries<S, T>(
  stubOf: () => S,
  call: (stub: S) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(stubOf());
    } catch (error) {
      if (attempt >= attempts || !isRetryable(error)) throw error;
      await (options.sleep ?? sleep)(backoffMs(attempt, options));
    }
  }
}

/**
 * A stub that retries the `idempotent` methods through {@link withRetries}, each attempt on a new
 * stub from `stubOf`; every other property is the first stub's own. Callers keep the stub's type.
 */
export function retryingStub<S extends object>(
  stubOf: () => S,
  idempotent: ReadonlySet<string>,
  options: RetryOptions = {},
): S {
  const first = stubOf();
  return new Proxy(first, {
    get(target, property) {
      if (typeof property === "string" && idempotent.has(property)) {
        return (...args: unknown[]) => {
          let attempt = 0;
          // The first attempt uses the stub already made; each retry makes its own.
          const next = () => (attempt++ === 0 ? target : stubOf());
          return withRetries(next, (stub) => (stub as Record<string, Method>)[property]!(...args), options);
        };
      }
      const value: unknown = Reflect.get(target, property);
      // Not `value.bind(target)`: on an RPC stub, `bind` would be read as a remote method too.
      return typeof value === "function" ? (...args: unknown[]) => Reflect.apply(value, target, args) : value;
    },
  });
}
