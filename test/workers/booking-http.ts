/**
 * Helpers for the selection API's tests: calls to `/selection/*` through the Worker (answers parsed
 * with 64-bit integers exact), and `schedule`, which makes workers schedulable in a partition.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type {
  SchedulablePartition,
  SchedulableWorker,
} from "../../durable-objects/core/selection/schedulable";
import { trackerName } from "../../durable-objects/naming";
import { parseExact } from "./api-http";
import { type Answer, postJson, send } from "./reliability-http";

export const BLOCK_SIZE = 4;

/** `from ..= to`. */
export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

export function uniquePartition(prefix = "sel") {
  return { model: `${prefix}-${crypto.randomUUID()}`, group: "default" };
}

export type Partition = ReturnType<typeof uniquePartition>;

export interface Scheduled {
  workerId: bigint;
  dpStart?: number;
  dpSize?: number;
  taints?: string[];
}

/**
 * Registers `workers` in the partition at `replica` and makes them schedulable there, with endpoint
 * `http://w<id>`. The catalog (`POST /selection/workers`) is what makes a worker schedulable; until it
 * is in the tracker, its place in the object is stood in for here.
 */
export async function schedule(
  p: Partition,
  workers: Scheduled[],
  replica = "primary",
  headers: Record<string, string> = {},
): Promise<void> {
  for (const w of workers) {
    const registered = await postJson(
      "/register",
      {
        model_name: p.model,
        tenant_id: p.group,
        worker_id: w.workerId,
        block_size: BLOCK_SIZE,
        dp_start: w.dpStart ?? 0,
        dp_size: w.dpSize ?? 1,
      },
      headers,
    );
    expect([201, 409]).toContain(registered.status);
  }
  await standIn(p, workers, replica);
}

/** Points the tracker object's schedulable workers at `workers` (see {@link schedule}). */
export async function standIn(p: Partition, workers: Scheduled[], replica = "primary"): Promise<void> {
  const partition: SchedulablePartition = {
    blockSize: BLOCK_SIZE,
    isEagle: false,
    workers: workers.map(
      (w): SchedulableWorker => ({
        workerId: w.workerId,
        endpoint: `http://w${w.workerId}`,
        dpStart: w.dpStart ?? 0,
        dpSize: w.dpSize ?? 1,
        taints: w.taints ?? [],
      }),
    ),
  };
  const stub = env.TRACKER.getByName(trackerName({ replica, model: p.model, tenant: p.group }));
  await runInDurableObject(stub, (instance) => {
    const host = (instance as unknown as { selection: { schedulable: () => SchedulablePartition } })
      .selection;
    host.schedulable = () => partition;
  });
}

export function body(p: Partition, fields: Record<string, unknown>) {
  return { model_name: p.model, routing_group: p.group, ...fields };
}

export function selectionPost(path: string, payload: unknown, headers: Record<string, string> = {}) {
  return postJson(`/selection${path}`, payload, headers);
}

export function selectionCall(method: string, path: string, headers: Record<string, string> = {}) {
  return send(method, `/selection${path}`, { headers });
}

/** The JSON of an answer, after checking its status. */
export function jsonOf(answer: Answer, status: number): Record<string, unknown> {
  expect({ status: answer.status, text: answer.text }).toMatchObject({ status });
  return parseExact(answer.text) as Record<string, unknown>;
}
