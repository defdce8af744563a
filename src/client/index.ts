/**
 * A typed client for frontends, from the app's own type (`slot-tracker.ts`), with exact 64-bit JSON
 * (`exact.ts`), refusals as `SlotTrackerError` (`errors.ts`), Dynamo's selection service as methods
 * (`selection.ts`) and frontend leases with their heartbeat (`leases.ts`). Import types only from
 * the server side; nothing of the Worker ships with a frontend but the two small JSON modules of
 * `src/wire/`.
 */
export type { AppType } from "../app";
export { readOk, SlotTrackerError } from "./errors";
export { type Exact, type Exactly, postExact, readExact, sendExact } from "./exact";
export {
  type KeepLeaseOptions,
  keepLease,
  type LeaseApi,
  type LeaseClient,
  type LeaseGrantAnswer,
  type LeaseKeeper,
  type LeaseTerms,
  leaseClient,
  type TrackerQuery,
} from "./leases";
export { type SelectionClient, selectionClient } from "./selection";
export type * from "./selection-types";
export { type ClientOptions, type SlotTrackerClient, slotTrackerClient } from "./slot-tracker";
