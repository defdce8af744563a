import type { AddInput, RegisterInput } from "../../types";
import type { EventKey } from "./clock";

/**
 * A change accepted at one replica, as shipped to the others. Each carries its key; applying the
 * same set of changes in any order gives the same state (see `replica-merge.ts`).
 */
export type ReplicaEvent =
  | (EventKey & { type: "register" } & RegisterInput)
  | (EventKey & { type: "unregister"; workerId: bigint })
  | (EventKey &
      AddInput & {
        type: "add";
        /** When the origin booked it, epoch ms (prefill anchor). */
        startedAt: number;
        /** When it expires everywhere, epoch ms: carried so that every replica expires it at once. */
        deadline: number;
      })
  | (EventKey & { type: "prefill_complete"; requestId: string })
  | (EventKey & { type: "free"; requestId: string })
  | (EventKey & {
      type: "bind";
      /** A `/route` session bound to a rank on one hop until `expiresAt` (epoch ms). */
      sessionId: string;
      hop: "decode" | "prefill";
      workerId: bigint;
      dpRank: number;
      expiresAt: number;
    });

export type AddEvent = Extract<ReplicaEvent, { type: "add" }>;
export type RegisterEvent = Extract<ReplicaEvent, { type: "register" }>;
export type BindEvent = Extract<ReplicaEvent, { type: "bind" }>;

/** A change that starts or ends a request's prefill: what a request id's timeline holds. */
export type TimelineEvent = AddEvent | Extract<ReplicaEvent, { type: "free" | "prefill_complete" }>;
