/**
 * A tracker as the object builds it for the selection API: a real `Tracker` whose workers come from
 * catalog upserts (what `POST /selection/workers` writes), and the object's `SelectionHost` over it
 * with the router settings of an unconfigured deployment (`routerSettingsOf({})`: Dynamo's defaults,
 * the public tracking hash). Calling the host is calling the code the object runs, minus its shell
 * (SQLite write-through, RPC and the alarm).
 */
import type { TrackerLimits } from "../../durable-objects/core/tracker";
import { Tracker } from "../../durable-objects/core/tracker";
import { routerSettingsOf } from "../../durable-objects/router-settings";
import { SelectionHost } from "../../durable-objects/selection-host";

export const BLOCK_SIZE = 16;

export interface CatalogShape {
  workers: number;
  dpSize: number;
}

/** Worker ids above 2^53, as Dynamo's instance ids often are; one per catalog worker. */
export function workerIds(count: number): bigint[] {
  return Array.from({ length: count }, (_, w) => (0x9e37_79b9n << 32n) + BigInt(w) * 0x1_0001n);
}

export interface SelectionPartition {
  tracker: Tracker;
  host: SelectionHost;
  workerIds: bigint[];
}

/** A partition of `shape` schedulable catalog workers (block size 16), every rank idle, as of `now`. */
export function selectionPartition(
  shape: CatalogShape,
  now: number,
  limits: Partial<TrackerLimits> = {},
): SelectionPartition {
  const tracker = new Tracker({ model: "bench", tenant: "default", limits });
  const ids = workerIds(shape.workers);
  for (const workerId of ids) {
    const written = tracker.upsertCatalog(
      {
        workerId,
        model: "bench",
        endpoint: `http://w${workerId}:8000`,
        blockSize: BLOCK_SIZE,
        dpStart: 0,
        dpSize: shape.dpSize,
      },
      now,
    );
    if (!written.ok) throw new Error(written.message);
    if (written.record.lifecycle !== "schedulable") {
      throw new Error(`catalog worker ${workerId} is ${written.record.lifecycle}`);
    }
  }
  return { tracker, host: new SelectionHost(tracker, routerSettingsOf({})), workerIds: ids };
}
