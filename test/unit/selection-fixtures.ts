/** A tracker with schedulable workers and a selection context over it, for the selection core's tests. */
import { PUBLIC_TRACKING } from "../../durable-objects/core/hashing/tracking-config";
import { seededRng } from "../../durable-objects/core/routing/rng";
import {
  DEFAULT_KV_ROUTER_CONFIG,
  type KvRouterConfig,
} from "../../durable-objects/core/routing/router-config";
import { PendingSelections } from "../../durable-objects/core/selection/pending-selections";
import type {
  SchedulablePartition,
  SchedulableWorker,
} from "../../durable-objects/core/selection/schedulable";
import type { SelectionContext } from "../../durable-objects/core/selection/select";
import type { Tracker } from "../../durable-objects/core/tracker";
import type { SelectionPrompt } from "../../durable-objects/selection-types";
import { T0, tracker } from "./tracker-fixtures";

export const A = 1n;
export const B = 2n;
export const BS = 4;

export function schedulable(workerId: bigint, extra: Partial<SchedulableWorker> = {}): SchedulableWorker {
  return { workerId, endpoint: `http://w${workerId}`, dpStart: 0, dpSize: 1, taints: [], ...extra };
}

/** Registered workers (the book) that the stand-in catalog calls schedulable. */
export class Partition {
  readonly tracker: Tracker;
  readonly pending = new PendingSelections();
  workers: SchedulableWorker[];
  config: KvRouterConfig = { ...DEFAULT_KV_ROUTER_CONFIG };
  now = T0;
  seed = 1;

  constructor(workers: SchedulableWorker[] = [schedulable(A), schedulable(B)]) {
    this.tracker = tracker({ model: "model-a", tenant: "default" });
    this.workers = workers;
    for (const w of workers) {
      this.tracker.register(
        { workerId: w.workerId, blockSize: BS, dpStart: w.dpStart, dpSize: w.dpSize },
        this.now,
      );
    }
  }

  ctx(): SelectionContext {
    const partition: SchedulablePartition | undefined =
      this.workers.length === 0 ? undefined : { blockSize: BS, isEagle: false, workers: this.workers };
    return {
      tracker: this.tracker,
      partition,
      config: this.config,
      tracking: { ok: true, tracking: PUBLIC_TRACKING },
      rng: seededRng(this.seed++),
      now: this.now,
    };
  }
}

export function tokens(...ids: number[]): SelectionPrompt {
  return { kind: "tokens", tokens: { tokenIds: Uint32Array.from(ids) } };
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
