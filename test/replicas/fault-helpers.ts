/**
 * Helpers for the fault tests: HTTP calls to one replica, a fresh registered tracker, convergence
 * polling, each replica's live book read from inside its object (so a test can compare replicas
 * request by request), and a replica made unreachable to its peers.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { trackerName } from "../../durable-objects/naming";
import type { TrackerObject } from "../../durable-objects/tracker-object";
import { type Answer, listing, postJson, send } from "../workers/reliability-http";

export const REPLICAS = ["east", "west", "apac"] as const;
export type Replica = (typeof REPLICAS)[number];

const at = (replica: Replica) => ({ "x-slot-tracker-replica": replica });

/** POSTs JSON to one replica; a call the Worker could not complete comes back as status 0. */
export async function post(replica: Replica, path: string, body: object): Promise<Answer> {
  try {
    return await postJson(path, body, at(replica));
  } catch (error) {
    return { status: 0, headers: new Headers(), bytes: new Uint8Array(), text: String(error) };
  }
}

export const workers = (replica: Replica, model: string) => listing("/workers", model, at(replica));
export const loads = (replica: Replica, model: string) => listing("/loads", model, at(replica));

export async function peers(replica: Replica, model: string) {
  const answer = await send("GET", `/replica_sync/peers?model_name=${encodeURIComponent(model)}`, {
    headers: at(replica),
  });
  return JSON.parse(answer.text) as { peers: { peer: string; state: string; queued_events: number }[] };
}

export function stubOf(replica: Replica, model: string) {
  return env.TRACKER.getByName(trackerName({ replica, model, tenant: "default" }));
}

/** Internals the tests reach into (see `replication.test.ts` for the same seam). */
export interface Internals {
  tracker: {
    book: {
      requests: Map<
        string,
        { id: string; slot: { workerId: bigint; dpRank: number }; prefillTokens: number; inPrefill: boolean }
      >;
    };
    promptOf(req: unknown): BigUint64Array;
  };
  sync: { receive: (...args: unknown[]) => unknown } | null;
}

export const internals = (instance: unknown) => instance as Internals;

export interface LiveRow {
  id: string;
  workerId: string;
  rank: number;
  tokens: number;
  prefillPending: boolean;
  hashes: string[];
}

/** One replica's live requests, read from its object's memory, sorted by id. */
export function liveBook(replica: Replica, model: string): Promise<LiveRow[]> {
  return runInDurableObject(stubOf(replica, model), (instance: unknown) => {
    const { tracker } = internals(instance as TrackerObject);
    return [...tracker.book.requests.values()]
      .map((r) => ({
        id: r.id,
        workerId: String(r.slot.workerId),
        rank: r.slot.dpRank,
        tokens: r.prefillTokens,
        prefillPending: r.inPrefill,
        hashes: [...tracker.promptOf(r)].map(String),
      }))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  });
}

/** Polls until every replica answers `read` identically; fails with the three views if they never do. */
export async function converged<T>(read: (r: Replica) => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const views = await Promise.all(REPLICAS.map(read));
    const texts = views.map((v) => JSON.stringify(v));
    if (texts.every((t) => t === texts[0])) return views[0]!;
    if (Date.now() > deadline) {
      expect(texts[1], "west vs east").toBe(texts[0]);
      expect(texts[2], "apac vs east").toBe(texts[0]);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 25 ms until it holds; fails after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(25);
  }
}

/** A small seeded generator (mulberry32), so a failing run can be replayed from its printed seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

let counter = 0;
export const unique = () => `faults-${++counter}-${crypto.randomUUID()}`;

/** Registers worker 1 (ranks 0..3) for `model` on `replica` and waits until every replica lists it. */
export async function registered(model: string, replica: Replica = "east") {
  const answer = await post(replica, "/register", {
    worker_id: 1,
    model_name: model,
    block_size: 16,
    dp_start: 0,
    dp_size: 4,
  });
  expect(answer.status).toBe(201);
  await converged((r) => workers(r, model));
}

/** Makes `replicas` refuse every batch from their peers, as if unreachable; returns the undo. */
export async function blockReceive(replicas: Replica[], model: string): Promise<() => Promise<void>> {
  const originals = new Map<Replica, (...args: unknown[]) => unknown>();
  for (const r of replicas) {
    await runInDurableObject(stubOf(r, model), (instance) => {
      const sync = internals(instance).sync!;
      originals.set(r, sync.receive);
      sync.receive = () => {
        throw new Error(`${r} is unreachable`);
      };
    });
  }
  return async () => {
    for (const r of replicas) {
      await runInDurableObject(stubOf(r, model), (instance) => {
        internals(instance).sync!.receive = originals.get(r)!;
      });
    }
  };
}
