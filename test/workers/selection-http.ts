/** HTTP helpers for the selection catalog's tests: its routes under `/selection`, ids kept exact. */
import { expect } from "vitest";
import { call, get, okJson, parseExact, post, toJson } from "./api-http";

export interface WireRecord {
  worker_id: bigint | number;
  model_name: string;
  routing_group: string;
  lifecycle: string;
  endpoint: string | null;
  block_size: number | null;
  data_parallel_start_rank: number | null;
  data_parallel_size: number | null;
  not_schedulable_reasons?: string[];
}

export function postWorker(body: object | string, headers: Record<string, string> = {}): Promise<Response> {
  return post("/selection/workers", body, headers);
}

export function patchWorker(id: string | number | bigint, body: unknown): Promise<Response> {
  return call("PATCH", `/selection/workers/${id}`, {
    body: typeof body === "string" ? body : toJson(body),
    headers: { "content-type": "application/json" },
  });
}

export function deleteWorker(id: string | number | bigint): Promise<Response> {
  return call("DELETE", `/selection/workers/${id}`);
}

/** The answer's status and record, integers exact. */
export async function recordOf(
  res: Response | Promise<Response>,
): Promise<{ status: number; record: WireRecord }> {
  const response = await res;
  const text = await response.text();
  expect(response.headers.get("content-type"), text).toBe("application/json");
  return { status: response.status, record: parseExact(text) as WireRecord };
}

export async function catalogOf(query: Record<string, string>): Promise<WireRecord[]> {
  return (await okJson(get("/selection/workers", query))) as WireRecord[];
}

/** The raw text of a partition's catalog listing: what a refused call must leave as it was. */
export async function catalogText(model: string, group = "default"): Promise<string> {
  const res = await get("/selection/workers", { model_name: model, routing_group: group });
  expect(res.status).toBe(200);
  return res.text();
}

/** A complete record of `model`: an endpoint and a block size (16). */
export function complete(model: string, workerId: number | bigint, more: object = {}): object {
  return {
    worker_id: workerId,
    model_name: model,
    endpoint: `http://w${workerId}:8000`,
    block_size: 16,
    ...more,
  };
}
