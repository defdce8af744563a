/**
 * Helpers for the selection API's tests: calls to `/selection/*` through the Worker (answers parsed
 * with 64-bit integers exact), and `schedule`, which makes workers schedulable in a partition through
 * the catalog.
 */
import { expect } from "vitest";
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

/** The catalog record that makes `w` schedulable in the partition, with endpoint `http://w<id>`. */
export function catalogRecord(p: Partition, w: Scheduled) {
  return {
    worker_id: w.workerId,
    model_name: p.model,
    routing_group: p.group,
    endpoint: `http://w${w.workerId}`,
    block_size: BLOCK_SIZE,
    data_parallel_start_rank: w.dpStart ?? 0,
    data_parallel_size: w.dpSize ?? 1,
    taints: w.taints ?? [],
  };
}

/**
 * Makes `workers` schedulable in the partition through the catalog (`POST /selection/workers`, a
 * full replace each), at `replica`; the change replicates from there like any other.
 */
export async function schedule(
  p: Partition,
  workers: Scheduled[],
  replica = "primary",
  headers: Record<string, string> = {},
): Promise<void> {
  for (const w of workers) {
    const posted = await postJson("/selection/workers", catalogRecord(p, w), {
      "x-slot-tracker-replica": replica,
      ...headers,
    });
    expect({ status: posted.status, text: posted.text }).toMatchObject({ status: 201 });
    expect(parseExact(posted.text)).toMatchObject({ lifecycle: "schedulable" });
  }
}

/** Removes workers from the catalog (`DELETE /selection/workers/{id}`), at `replica`. */
export async function unschedule(ids: bigint[], replica = "primary"): Promise<void> {
  for (const id of ids) {
    const removed = await send("DELETE", `/selection/workers/${id}`, {
      headers: { "x-slot-tracker-replica": replica },
    });
    expect({ status: removed.status, text: removed.text }).toMatchObject({ status: 200 });
  }
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
