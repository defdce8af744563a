/**
 * Frontend leases from the typed client (SPEC §8): the slot-tracker API's lease routes as methods
 * (`leaseClient`; the selection API's are on `selectionClient`), and `keepLease`, the heartbeat a
 * frontend runs for as long as it books under its `owner`.
 */
import { readOk, SlotTrackerError } from "./errors";
import { type ClientOptions, slotTrackerClient } from "./slot-tracker";

/** The lease's terms, in either API. */
export interface LeaseTerms {
  /** The frontend instance's id, 1..256 UTF-8 bytes. */
  owner: string;
  /** How long the lease lives from each renewal, ms (1,000..600,000). */
  ttl_ms: number;
}

/** The slot-tracker API's tracker, named either way (SPEC §3.1). */
export interface TrackerQuery {
  model_name: string;
  tenant_id?: string;
  routing_group?: string;
}

/** `POST /leases`' answer. */
export interface LeaseGrantAnswer {
  owner: string;
  /** Epoch ms until which the lease lives. */
  expires_at_ms: number;
}

/** The two calls `keepLease` makes; `leaseClient` and `selectionClient` both have them. */
export interface LeaseApi<Q> {
  renewLease(body: Q & LeaseTerms): Promise<LeaseGrantAnswer>;
  endLease(owner: string, query: Q): Promise<unknown>;
}

/** Path parameters are not encoded by hono/client; an owner may hold any character. */
export const ownerParam = (owner: string) => ({ param: { owner: encodeURIComponent(owner) } });

export function leaseClient(baseUrl: string, options: ClientOptions = {}) {
  const api = slotTrackerClient(baseUrl, options).leases;
  return {
    /** `POST /leases`: creates or renews; the answer says until when the lease lives. */
    renewLease: async (body: TrackerQuery & LeaseTerms): Promise<LeaseGrantAnswer> =>
      readOk(await api.$post({ json: body })) as Promise<LeaseGrantAnswer>,
    /** `DELETE /leases/{owner}`: ends it, freeing its bookings; 404 when no lease of `owner` is live. */
    endLease: async (owner: string, query: TrackerQuery) =>
      readOk(await api[":owner"].$delete({ ...ownerParam(owner), query })),
    /** `GET /leases`: the tracker's live leases with their booking counts, sorted by owner. */
    listLeases: async (query: TrackerQuery) => readOk(await api.$get({ query })),
  };
}

export type LeaseClient = ReturnType<typeof leaseClient>;

export interface KeepLeaseOptions {
  /** Told of every failed renewal (retried at the next tick) and of a failed final deletion. */
  onError?: (error: unknown) => void;
}

/** A running heartbeat. */
export interface LeaseKeeper {
  /** The deadline of the last successful renewal (epoch ms), if any. */
  readonly expiresAtMs: number | undefined;
  /** Settles once the lease is first granted; never rejects (failures go to `onError`). */
  readonly ready: Promise<void>;
  /**
   * Stops renewing and deletes the lease (freeing its bookings at once). Never rejects: a failure is
   * reported to `onError`, and a lease already gone (404) is the end wanted. Calling it again waits
   * for the same deletion.
   */
  stop(): Promise<void>;
}

/**
 * Renews `lease` at once and then every `ttl_ms / 3` until stopped: a renewal may fail twice in a
 * row (each retried at the next tick) before the lease lapses. Timers are `setTimeout`s, so it runs
 * in Node and in Workers (there, only while the isolate serves the request that started it: keep it
 * in a Durable Object or a long-lived process). No renewal overlaps another, and none starts after
 * `stop()`.
 */
export function keepLease<Q extends object>(
  api: LeaseApi<NoInfer<Q>>,
  lease: Q & LeaseTerms,
  options: KeepLeaseOptions = {},
): LeaseKeeper {
  const period = Math.max(1, Math.floor(lease.ttl_ms / 3));
  const { owner, ttl_ms: _ttl, ...query } = lease;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let renewal: Promise<void> = Promise.resolve();
  let stopping: Promise<void> | undefined;
  let granted!: () => void;
  const ready = new Promise<void>((resolve) => {
    granted = resolve;
  });
  const report = (error: unknown) => {
    try {
      options.onError?.(error);
    } catch {
      // A throwing callback must not become an unhandled rejection of the heartbeat.
    }
  };
  const keeper: LeaseKeeper & { expiresAtMs: number | undefined } = {
    expiresAtMs: undefined,
    ready,
    stop,
  };

  function tick(): void {
    timer = undefined;
    const started = Date.now();
    renewal = api
      .renewLease(lease)
      .then((answer) => {
        keeper.expiresAtMs = Number(answer.expires_at_ms);
        granted();
      }, report)
      .then(() => {
        if (stopping === undefined) timer = setTimeout(tick, Math.max(0, period - (Date.now() - started)));
      });
  }

  function stop(): Promise<void> {
    if (stopping !== undefined) return stopping;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    // After the renewal in flight, so that it cannot recreate the lease this deletes.
    stopping = renewal
      .then(() => api.endLease(owner, query as unknown as Q))
      .then(
        () => undefined,
        (error: unknown) => {
          if (!(error instanceof SlotTrackerError && error.status === 404)) report(error);
        },
      );
    return stopping;
  }

  tick();
  return keeper;
}
