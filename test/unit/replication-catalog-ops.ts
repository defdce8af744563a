/**
 * The worker catalog's writes in the replication scenarios (`replication-scenario.ts`): upserts
 * complete or not, with or without a block size or the eagle flag, DP range patches and removals, on
 * the same worker ids as the slot-tracker API's registrations.
 */
import fc from "fast-check";
import type { Tracker } from "../../durable-objects/core/tracker";
import type { Result } from "../../durable-objects/types";

export type CatalogOp =
  /** `POST /selection/workers`: complete (an endpoint) or not, with or without a block size. */
  | {
      op: "upsert";
      workerId: bigint;
      complete: boolean;
      blockSize: number | undefined;
      dpStart: number;
      dpSize: number;
      eagle: boolean;
      /** Higher than the record's: the upsert keeps none of the worker's bookings. */
      incarnation?: bigint | undefined;
    }
  /** `PATCH /selection/workers/{id}` of the DP range only. */
  | { op: "patchRange"; workerId: bigint; dpStart: number; dpSize: number }
  | { op: "remove"; workerId: bigint };

export function isCatalogOp(op: { op: string }): op is CatalogOp {
  return op.op === "upsert" || op.op === "patchRange" || op.op === "remove";
}

/** With `incarnations`, upserts may carry one; without, the draws are those from before them. */
export function catalogOpArbs(workerId: fc.Arbitrary<bigint>, incarnations = false) {
  const upsert = {
    op: fc.constant("upsert" as const),
    workerId,
    complete: fc.constantFrom(true, true, false),
    blockSize: fc.constantFrom(16, 16, 32, undefined),
    dpStart: fc.constantFrom(0, 1),
    dpSize: fc.constantFrom(1, 2, 3),
    eagle: fc.constantFrom(false, false, true),
  };
  return [
    {
      weight: 2,
      arbitrary: incarnations
        ? fc.record({ ...upsert, incarnation: fc.constantFrom(undefined, undefined, 1n, 2n) })
        : fc.record(upsert),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant("patchRange" as const),
        workerId,
        dpStart: fc.constantFrom(0, 1, 2),
        dpSize: fc.constantFrom(1, 2, 3),
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("remove" as const), workerId }) },
  ];
}

export function runCatalogOp(t: Tracker, op: CatalogOp, now: number): Result {
  switch (op.op) {
    case "upsert":
      return t.upsertCatalog(
        {
          workerId: op.workerId,
          model: t.model,
          tenant: t.tenant,
          ...(op.complete && { endpoint: `http://w${op.workerId}` }),
          ...(op.blockSize !== undefined && { blockSize: op.blockSize }),
          dpStart: op.dpStart,
          dpSize: op.dpSize,
          ...(op.eagle && { isEagle: true }),
          ...(op.incarnation !== undefined && { incarnation: op.incarnation }),
        },
        now,
      );
    case "patchRange":
      return t.patchCatalog(op.workerId, { dpStart: op.dpStart, dpSize: op.dpSize }, now);
    case "remove":
      return t.removeCatalog(op.workerId, now);
  }
}

/**
 * A catalog write as one replica alone would take it the way an unreplicated tracker does: there a
 * catalog worker that leaves the book when the partition's fix moves drops its bookings, where a
 * replicated one keeps them aside in case the fix comes back (`catalog-book.ts`). With one block size,
 * no eagle flag and no incomplete record of a block size, the fix never moves a worker with bookings.
 */
export function singleReplicaOp(op: CatalogOp): CatalogOp {
  if (op.op !== "upsert") return op;
  return { ...op, blockSize: op.complete ? 16 : undefined, eagle: false };
}
