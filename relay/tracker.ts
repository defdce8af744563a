/**
 * The relay's calls to the tracker (SPEC §9): `POST /kv_events` with the batches' bytes joined, and
 * `GET /kv_events` for the rank's stream at a start. Answers are sorted into what the relay does
 * next: applied, out of sequence (replay), refused (the content is wrong: give it up), or retry (the
 * network, the tracker or its configuration: try again later, the batches kept).
 */
import { decode } from "@msgpack/msgpack";

export interface TrackerTarget {
  url: string;
  model: string;
  tenant: string | null;
  workerId: bigint;
  token: string | null;
}

export type PostOutcome =
  | { kind: "applied"; applied: number; ignored: number; nextSeq: number }
  | { kind: "gap"; expectedSeq: number }
  | { kind: "refused"; status: number; error: string }
  | { kind: "retry"; status: number | null; error: string };

export interface StreamState {
  epoch: string;
  nextSeq: number;
}

/** Statuses that say the content itself cannot be applied, whenever it is sent. */
const REFUSALS = new Set([400, 413, 415, 422]);
/** Each call gives up after this long; the relay then retries it. */
const CALL_TIMEOUT_MS = 30_000;

export class TrackerClient {
  constructor(private readonly target: TrackerTarget) {}

  async post(dpRank: number, epoch: string, seq: number, payloads: Uint8Array[]): Promise<PostOutcome> {
    const body = Buffer.concat(payloads);
    let res: Response;
    try {
      res = await fetch(this.endpoint(dpRank), {
        method: "POST",
        headers: {
          ...this.auth(),
          "content-type": "application/msgpack",
          "x-kv-event-seq": String(seq),
          "x-kv-event-epoch": epoch,
        },
        body,
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (err) {
      return { kind: "retry", status: null, error: messageOf(err) };
    }
    const text = await res.text().catch((err: unknown) => `(body unreadable: ${messageOf(err)})`);
    const answer = parsed(text);
    if (res.status === 200 && typeof answer?.next_seq === "number") {
      return {
        kind: "applied",
        applied: Number(answer.applied ?? 0),
        ignored: Number(answer.ignored ?? 0),
        nextSeq: answer.next_seq,
      };
    }
    const error = typeof answer?.error === "string" ? answer.error : text.slice(0, 500);
    if (res.status === 409 && typeof answer?.expected_seq === "number") {
      return { kind: "gap", expectedSeq: answer.expected_seq };
    }
    if (REFUSALS.has(res.status)) return { kind: "refused", status: res.status, error };
    return { kind: "retry", status: res.status, error };
  }

  /** The tracker's stream of this (worker, rank), null when it has none; throws when it cannot say. */
  async stream(dpRank: number): Promise<StreamState | null> {
    const url = new URL("kv_events", this.base());
    url.search = this.query().toString();
    const res = await fetch(url, {
      headers: { ...this.auth(), accept: "application/msgpack" },
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    if (res.status === 404) return null; // no tracker yet: nothing to resume
    if (res.status !== 200)
      throw new Error(`GET /kv_events: ${res.status} ${(await res.text()).slice(0, 300)}`);
    const streams = decode(new Uint8Array(await res.arrayBuffer()), { useBigInt64: true }) as {
      worker_id: number | bigint;
      dp_rank: number;
      epoch: string;
      next_seq: number | bigint;
    }[];
    const mine = streams.find((s) => BigInt(s.worker_id) === this.target.workerId && s.dp_rank === dpRank);
    return mine ? { epoch: mine.epoch, nextSeq: Number(mine.next_seq) } : null;
  }

  private endpoint(dpRank: number): URL {
    const url = new URL("kv_events", this.base());
    const query = this.query();
    query.set("worker_id", this.target.workerId.toString());
    query.set("dp_rank", String(dpRank));
    url.search = query.toString();
    return url;
  }

  private base(): string {
    return this.target.url.endsWith("/") ? this.target.url : `${this.target.url}/`;
  }

  private query(): URLSearchParams {
    const query = new URLSearchParams({ model_name: this.target.model });
    if (this.target.tenant !== null) query.set("tenant_id", this.target.tenant);
    return query;
  }

  private auth(): Record<string, string> {
    return this.target.token === null ? {} : { authorization: `Bearer ${this.target.token}` };
  }
}

function parsed(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function messageOf(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}
