/**
 * Dynamo's selection service as methods (`<base>/selection`, reference selection §1.1), over the
 * typed client's paths: bodies written and answers read with 64-bit integers exact, the token and
 * replica of `ClientOptions` on every call, and every refusal thrown as a `SlotTrackerError` with the
 * service's text. `const sel = selectionClient("https://tracker.example.com", { token })`.
 */
import type { ClientResponse } from "hono/client";
import { readOk } from "./errors";
import { type AnyEndpoint, callExact, type Exact, type Exactly } from "./exact";
import type {
  OutputBlockRequest,
  OverlapScoresRequest,
  OverlapScoresResponse,
  PartitionQuery,
  PotentialLoadsRequest,
  ReplicaPeerRequest,
  ReservationRequest,
  SelectAndReserveRequest,
  SelectRequest,
  WorkerPatchRequest,
  WorkerRequest,
} from "./selection-types";
import type { LeaseGrantAnswer, LeaseTerms } from "./leases";
import { ownerParam } from "./leases";
import { type ClientOptions, slotTrackerClient } from "./slot-tracker";

type Ok = ClientResponse<{ status: "ok" }>;
/** The peer routes answer only 409 here, so their handlers' type (`never`) leaves them out of AppType. */
type PeerRoutes = Record<"register_peer" | "deregister_peer", { $post: AnyEndpoint<Ok> }>;

/** Path parameters are not encoded by hono/client; a reservation id may hold any character. */
const reservation = (id: string) => ({ param: { reservation_id: encodeURIComponent(id) } });
const worker = (id: number | bigint) => ({ param: { worker_id: String(id) } });

export function selectionClient(baseUrl: string, options: ClientOptions = {}) {
  const api = slotTrackerClient(baseUrl, options).selection;
  const peers = api.replica_sync as typeof api.replica_sync & PeerRoutes;
  const done = async (res: Promise<Ok>): Promise<void> => {
    await readOk(await res);
  };
  return {
    // The worker catalog.
    /** `POST /workers` (201): the judged record, `incomplete` ones too. */
    upsertWorker: async (body: Exactly<WorkerRequest>) =>
      readOk(await callExact(api.workers.$post, {}, body)),
    /** `GET /workers`, sorted by (model_name, routing_group, worker_id). */
    listWorkers: async (query: PartitionQuery = {}) => readOk(await api.workers.$get({ query })),
    /** `PATCH /workers/{id}`: present fields replace; 404 "worker {id} not found". */
    patchWorker: async (workerId: number | bigint, body: Exactly<WorkerPatchRequest>) =>
      readOk(await callExact(api.workers[":worker_id"].$patch, worker(workerId), body)),
    /** `DELETE /workers/{id}`: the final record, `unschedulable`. */
    deleteWorker: async (workerId: number | bigint) =>
      readOk(await api.workers[":worker_id"].$delete(worker(workerId))),
    health: async () => readOk(await api.health.$get()),
    /** `GET /ready`: the answer whether ready (200) or not (503); `ready` says which. */
    ready: async () => readOk(await api.ready.$get(), [503]),
    /** `GET /replica_sync/peers`: the other replicas' names, sorted. */
    replicaPeers: async () => readOk(await api.replica_sync.peers.$get()),
    /** Refused here (409): peers are the replicas `REPLICAS` names. */
    registerPeer: (body: ReplicaPeerRequest) => done(callExact(peers.register_peer.$post, {}, body)),
    deregisterPeer: (body: ReplicaPeerRequest) => done(callExact(peers.deregister_peer.$post, {}, body)),

    // Choosing and booking.
    /** `POST /select`: the choice, booked by nothing; with a `selection_id` it stays pending. */
    select: async (body: Exactly<SelectRequest>) => readOk(await callExact(api.select.$post, {}, body)),
    /** `POST /select_and_reserve` (200): chosen and booked in one step. */
    selectAndReserve: async (body: Exactly<SelectAndReserveRequest>) =>
      readOk(await callExact(api.select_and_reserve.$post, {}, body)),
    /** `POST /reservations` (201): a pending selection replayed, or the explicit form. */
    createReservation: async (body: Exactly<ReservationRequest>) =>
      readOk(await callExact(api.reservations.$post, {}, body)),
    prefillComplete: (id: string) =>
      done(api.reservations[":reservation_id"].prefill_complete.$post(reservation(id))),
    /** One more output block; `decay_fraction` in [0, 1]. */
    outputBlock: (id: string, body: OutputBlockRequest = {}) =>
      done(callExact(api.reservations[":reservation_id"].output_block.$post, reservation(id), body)),
    /** `DELETE /reservations/{id}`: ends the booking, as `/free` does. */
    freeReservation: (id: string) => done(api.reservations[":reservation_id"].$delete(reservation(id))),

    // Frontend leases (SPEC §8; not Dynamo's): bookings with `owner` live while its lease does.
    /** `POST /leases`: creates or renews; the answer says until when the lease lives. */
    renewLease: async (body: PartitionQuery & LeaseTerms): Promise<LeaseGrantAnswer> =>
      readOk(await api.leases.$post({ json: body })) as Promise<LeaseGrantAnswer>,
    /** `DELETE /leases/{owner}`: ends it, freeing its bookings; 404 when no lease of `owner` is live. */
    endLease: async (owner: string, query: PartitionQuery = {}) =>
      readOk(await api.leases[":owner"].$delete({ ...ownerParam(owner), query })),
    /** `GET /leases`: the partition's live leases with their booking counts, sorted by owner. */
    listLeases: async (query: PartitionQuery = {}) => readOk(await api.leases.$get({ query })),

    // Load views and the cache index.
    loads: async (query: PartitionQuery = {}) => readOk(await api.loads.$get({ query })),
    potentialLoads: async (body: Exactly<PotentialLoadsRequest>) =>
      readOk(await callExact(api.potential_loads.$post, {}, body)),
    overlapScores: async (body: Exactly<OverlapScoresRequest>) =>
      readOk(await callExact(api.overlap_scores.$post, {}, body)) as Promise<Exact<OverlapScoresResponse>>,
    /** `GET /dump` (admin): each partition's cache index, Dynamo's recovery form. */
    dump: async () => readOk(await api.dump.$get()),
  };
}

export type SelectionClient = ReturnType<typeof selectionClient>;
