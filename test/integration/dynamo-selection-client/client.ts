/**
 * Dynamo's HTTP clients of the selection service, ported call by call: the EPP's router-only http
 * mode (`deploy/inference-gateway/ext-proc/src/selector_client.rs`, `SelectorClient` and
 * `SelectorFleet`) and the Ray select-then-reserve flow of
 * `docs/components/router/standalone-selection.md`. Each method sends what the Rust client sends
 * (`reqwest`'s `.json()` sets `content-type: application/json`; GET and DELETE carry no body) and
 * judges the answer as it does: `ensure_success` is any 2xx, with the listed exceptions (a 404 on a
 * worker delete, a 409 from the peer mesh). Every call is logged so a test can assert what was sent.
 */
import { type Json, parseJson, writeJson } from "./json";
import { type Decoder, vec } from "./serde";
import {
  type CatalogRecordWire,
  catalogRecordWire,
  type ExplicitReservation,
  type PromptSelectRequest,
  type ReplayReservation,
  type ReservationResponse,
  readyResponse,
  recordMatches,
  reservationResponse,
  type SelectRequest,
  type SelectResponse,
  selectResponse,
  statusOk,
  type WorkerRegistration,
} from "./wire";

export interface Answer {
  status: number;
  text: string;
}

export interface Call {
  method: string;
  path: string;
  body: string | undefined;
  status: number;
}

/** A non-2xx where the client expects success: what `ensure_success` bails with. */
export class ClientError extends Error {
  constructor(
    readonly op: string,
    readonly answer: Answer,
  ) {
    super(`${op} failed with status ${answer.status}: ${answer.text}`);
  }
}

/** The outcome of one `reconcile_replica`: what it wrote and whether the replica is routable. */
export interface Reconciled {
  upserted: bigint[];
  deleted: bigint[];
  routable: boolean;
}

/** How `peer_op` takes an answer: 2xx and 409 (sync disabled) are quiet, anything else is logged. */
export type PeerOutcome = "ok" | "sync disabled" | "logged";

export class SelectionClient {
  readonly base: string;
  readonly calls: Call[] = [];

  /** `SelectorClient::new` trims trailing slashes from the base URL. */
  constructor(base: string) {
    this.base = base.replace(/\/+$/, "");
  }

  private async send(method: string, path: string, body?: unknown): Promise<Answer> {
    const text = body === undefined ? undefined : writeJson(body);
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: text === undefined ? {} : { "content-type": "application/json" },
      body: text,
    });
    const answer = { status: res.status, text: await res.text() };
    this.calls.push({ method, path, body: text, status: answer.status });
    return answer;
  }

  private async expectSuccess<T>(op: string, answer: Answer, decode: Decoder<T>): Promise<T> {
    if (answer.status < 200 || answer.status > 299) throw new ClientError(op, answer);
    return decode(parseJson(answer.text) as Json, op);
  }

  /** `get_workers`: the replica's catalog keyed by worker id. */
  async getWorkers(): Promise<Map<bigint, CatalogRecordWire>> {
    const records = await this.expectSuccess(
      "GET /workers",
      await this.send("GET", "/workers"),
      vec(catalogRecordWire),
    );
    return new Map(records.map((record) => [record.worker_id, record]));
  }

  /** `upsert_worker`: `POST /workers`, any 2xx. */
  async upsertWorker(registration: WorkerRegistration): Promise<void> {
    const answer = await this.send("POST", "/workers", registration);
    if (answer.status < 200 || answer.status > 299) throw new ClientError("POST /workers", answer);
  }

  /** `delete_worker`: a 404 (a replica that never saw the worker) is success. */
  async deleteWorker(workerId: bigint): Promise<Answer> {
    const answer = await this.send("DELETE", `/workers/${workerId}`);
    if (answer.status !== 404 && (answer.status < 200 || answer.status > 299)) {
      throw new ClientError("DELETE /workers/{id}", answer);
    }
    return answer;
  }

  /** `ready`: routable only on a 2xx whose body decodes with `ready: true`. */
  async ready(): Promise<boolean> {
    const answer = await this.send("GET", "/ready");
    if (answer.status < 200 || answer.status > 299) return false;
    try {
      return readyResponse(parseJson(answer.text), "GET /ready").ready;
    } catch {
      return false;
    }
  }

  /** `reconcile_replica`: upsert what is missing or differs, delete what is not desired, gate on ready. */
  async reconcile(desired: WorkerRegistration[]): Promise<Reconciled> {
    const actual = await this.getWorkers();
    const upserted: bigint[] = [];
    for (const registration of desired) {
      const record = actual.get(registration.worker_id);
      if (record !== undefined && recordMatches(registration, record)) continue;
      await this.upsertWorker(registration);
      upserted.push(registration.worker_id);
    }
    const wanted = new Set(desired.map((registration) => registration.worker_id));
    const deleted: bigint[] = [];
    for (const workerId of actual.keys()) {
      if (wanted.has(workerId)) continue;
      await this.deleteWorker(workerId);
      deleted.push(workerId);
    }
    return { upserted, deleted, routable: await this.ready() };
  }

  /** `peer_op`: `POST /replica_sync/{register_peer|deregister_peer}` with `{"endpoint": "tcp://…"}`. */
  async peerOp(op: "register_peer" | "deregister_peer", endpoint: string): Promise<PeerOutcome> {
    const answer = await this.send("POST", `/replica_sync/${op}`, { endpoint });
    if (answer.status === 409) return "sync disabled";
    return answer.status >= 200 && answer.status <= 299 ? "ok" : "logged";
  }

  /** The first fleet's query-only `POST /select`. */
  async select(request: SelectRequest | PromptSelectRequest): Promise<SelectResponse> {
    return this.expectSuccess("POST /select", await this.send("POST", "/select", request), selectResponse);
  }

  /** The later fleet's `POST /select_and_reserve`; the raw answer too, for the booking facts. */
  async selectAndReserve(request: SelectRequest): Promise<{ response: SelectResponse; answer: Answer }> {
    const answer = await this.send("POST", "/select_and_reserve", request);
    const response = await this.expectSuccess("POST /select_and_reserve", answer, selectResponse);
    return { response, answer };
  }

  /** `POST /reservations`, either form; the answer is kept for tests of the refusals. */
  async reserve(body: ReplayReservation | ExplicitReservation): Promise<ReservationResponse> {
    return this.expectSuccess("POST /reservations", await this.reserveRaw(body), reservationResponse);
  }

  reserveRaw(body: ReplayReservation | ExplicitReservation): Promise<Answer> {
    return this.send("POST", "/reservations", body);
  }

  /** `POST /reservations/{id}/prefill_complete`: no body is sent (the service reads none). */
  async prefillComplete(selectionId: string): Promise<Answer> {
    return this.send("POST", `/reservations/${encodeURIComponent(selectionId)}/prefill_complete`);
  }

  /** `DELETE /reservations/{id}`. */
  async free(selectionId: string): Promise<Answer> {
    return this.send("DELETE", `/reservations/${encodeURIComponent(selectionId)}`);
  }

  /** The EPP's `free_reservation` / `prefill_complete`: idempotent, a 404 (unknown id) is success. */
  async lifecycleIdempotent(op: "prefill_complete" | "free", selectionId: string): Promise<void> {
    const answer = op === "free" ? await this.free(selectionId) : await this.prefillComplete(selectionId);
    if (answer.status === 404) return;
    await this.expectSuccess(`${op} ${selectionId}`, answer, statusOk);
  }

  /** A raw GET, for the inspection routes no client decodes. */
  get(path: string): Promise<Answer> {
    return this.send("GET", path);
  }
}
