/**
 * The HTTP status of each error code: the single table behind the Worker's error mapping
 * (`src/http/errors.ts`) and the per-op results of `POST /batch`, which the object computes so that
 * a batch answers in one RPC call what each op's own route would have answered.
 */
import type { ErrorCode } from "./types";

export const STATUS_OF_CODE = {
  invalid_block_size: 400,
  invalid_dp_size: 400,
  invalid_dp_range: 400,
  invalid_input: 400,
  block_size_mismatch: 409,
  duplicate_worker: 409,
  duplicate_request: 409,
  sequence_gap: 409,
  worker_not_found: 404,
  tracker_not_found: 404,
  rank_not_found: 404,
  request_not_found: 404,
  lease_not_found: 404,
  too_large: 413,
  limit_exceeded: 429,
  no_worker: 503,
} as const satisfies Record<ErrorCode, 400 | 404 | 409 | 413 | 429 | 503>;
