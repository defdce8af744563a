/**
 * Where the bad-call tests start from: a valid body for each write route against a `SeededTracker`
 * (`api-http.ts`), to break one part at a time. Each would change the tracker if it were accepted
 * (potential_loads aside, which only reads), so a refusal that changes nothing is a real refusal.
 */

export function validBodies(model: string): Record<string, Record<string, unknown>> {
  return {
    "/register": { model_name: model, worker_id: 3, block_size: 16, dp_start: 0, dp_size: 1 },
    "/unregister": { model_name: model, worker_id: 2 },
    "/add": {
      model_name: model,
      request_id: "new",
      worker_id: 1,
      dp_rank: 0,
      sequence_hashes: [1],
      new_isl_tokens: 1,
    },
    "/prefill_complete": { model_name: model, request_id: "live" },
    "/free": { model_name: model, request_id: "live" },
    "/potential_loads": { model_name: model, sequence_hashes: [1], new_isl_tokens: 1 },
  };
}
