import type { AddInput, RegisterInput } from "../types";
import type { LiveRequest } from "./live-request";

/**
 * The tracker's write-through port. The tracker calls it synchronously inside each mutation, after
 * its memory changed and before the call returns, so an object can persist the change in the same
 * synchronous step (and therefore before its response leaves). Tests run the tracker without one.
 */
export interface TrackerStore {
  workerAdded(input: RegisterInput): void;
  /** A worker left; its live requests left with it. */
  workerRemoved(workerId: bigint): void;
  requestAdded(req: LiveRequest, input: AddInput): void;
  prefillCompleted(req: LiveRequest): void;
  /** A decaying request became its rank's prefill anchor at `at` (epoch ms), after its add. */
  anchorMoved(req: LiveRequest, at: number): void;
  requestRemoved(req: LiveRequest): void;
  /** The last worker left: the tracker and all its state are gone. */
  trackerDeleted(): void;
}

const nothing = (): void => {};

export const NULL_STORE: TrackerStore = {
  workerAdded: nothing,
  workerRemoved: nothing,
  requestAdded: nothing,
  prefillCompleted: nothing,
  anchorMoved: nothing,
  requestRemoved: nothing,
  trackerDeleted: nothing,
};
