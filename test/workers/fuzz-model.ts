/**
 * A plain model of one tracker for the fuzz test: what the valid operations alone should produce,
 * straight from SPEC §3 (no trie, no queues), with the status each operation must answer. Every
 * integer is a bigint, matching how the test reads the Worker's answers (exactly).
 */

const U32_MAX = 2n ** 32n - 1n;

export interface ModelWorker {
  workerId: bigint;
  blockSize: bigint;
  dpStart: bigint;
  dpSize: bigint;
}

export interface ModelRequest {
  id: string;
  workerId: bigint;
  rank: bigint;
  hashes: bigint[];
  tokens: bigint;
  prefillDone: boolean;
  /** The lease that owns it, if any. */
  owner?: string;
  /** Client time just before the add was sent: the object expires it no earlier than this + the age. */
  sentAt: number;
}

export interface AddArgs {
  id: string;
  workerId: bigint;
  rank: bigint;
  hashes: bigint[];
  tokens: bigint;
  owner?: string;
}

const utf8 = new TextEncoder();

/** Orders strings by their UTF-8 bytes, as every listing of names does. */
function byUtf8(a: string, b: string): number {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

export class FuzzModel {
  blockSize: bigint | undefined;
  readonly workers = new Map<bigint, ModelWorker>();
  /** In add order, which is expiry order. */
  readonly requests = new Map<string, ModelRequest>();
  /** Live leases: owner → the deadline the tracker last answered (the fuzz's leases outlive the test). */
  readonly leases = new Map<string, bigint>();

  constructor(readonly model: string) {}

  register(w: ModelWorker): number {
    if (w.blockSize === 0n || w.dpSize === 0n) return 400;
    if (w.dpStart + w.dpSize > U32_MAX) return 400;
    if (this.blockSize !== undefined && w.blockSize !== this.blockSize) return 409;
    if (this.workers.has(w.workerId)) return 409;
    this.blockSize ??= w.blockSize;
    this.workers.set(w.workerId, w);
    return 201;
  }

  unregister(workerId: bigint): number {
    if (!this.workers.delete(workerId)) return 404;
    for (const [id, r] of this.requests) if (r.workerId === workerId) this.requests.delete(id);
    if (this.workers.size === 0) this.blockSize = undefined;
    return 200;
  }

  add(args: AddArgs, sentAt: number): number {
    if (this.blockSize === undefined) return 404;
    const w = this.workers.get(args.workerId);
    if (!w || args.rank < w.dpStart || args.rank >= w.dpStart + w.dpSize) return 404;
    if (this.requests.has(args.id)) return 409;
    if (args.owner !== undefined && !this.leases.has(args.owner)) return 404;
    this.requests.set(args.id, { ...args, prefillDone: false, sentAt });
    return 201;
  }

  prefillComplete(id: string): number {
    if (this.blockSize === undefined) return 404;
    const r = this.requests.get(id);
    if (!r) return 404;
    r.prefillDone = true;
    return 200;
  }

  free(id: string): number {
    if (this.blockSize === undefined) return 404;
    this.requests.delete(id);
    return 200;
  }

  /**
   * `POST /leases` answered `expiresAt`: a renewal never shortens a lease. @returns whether the
   * answer may be right (no earlier than the lease's last deadline).
   */
  renew(owner: string, expiresAt: bigint): boolean {
    const before = this.leases.get(owner);
    if (before !== undefined && expiresAt < before) return false;
    this.leases.set(owner, expiresAt);
    return true;
  }

  /** `DELETE /leases/{owner}`: its bookings are freed at once. */
  endLease(owner: string): { status: number; freed: bigint } {
    if (!this.leases.delete(owner)) return { status: 404, freed: 0n };
    let freed = 0n;
    for (const [id, r] of this.requests) {
      if (r.owner !== owner) continue;
      this.requests.delete(id);
      freed++;
    }
    return { status: 200, freed };
  }

  /** `GET /leases` rows. */
  leaseRows(): object[] {
    return [...this.leases.keys()].sort(byUtf8).map((owner) => ({
      owner,
      expires_at_ms: this.leases.get(owner)!,
      bookings: BigInt([...this.requests.values()].filter((r) => r.owner === owner).length),
    }));
  }

  /** `/route` may book only a rank that exists; the choice itself is the object's. */
  canBook(id: string, workerId: bigint, rank: bigint): boolean {
    const w = this.workers.get(workerId);
    return w !== undefined && rank >= w.dpStart && rank < w.dpStart + w.dpSize && !this.requests.has(id);
  }

  private ranks(): { workerId: bigint; rank: bigint }[] {
    return [...this.workers.values()]
      .sort((a, b) => (a.workerId < b.workerId ? -1 : 1))
      .flatMap((w) =>
        Array.from({ length: Number(w.dpSize) }, (_, i) => ({
          workerId: w.workerId,
          rank: w.dpStart + BigInt(i),
        })),
      );
  }

  private live(workerId: bigint, rank: bigint, expired: ReadonlySet<string>): ModelRequest[] {
    return [...this.requests.values()].filter(
      (r) => r.workerId === workerId && r.rank === rank && !expired.has(r.id),
    );
  }

  /** `GET /workers` rows. */
  workerRows(): object[] {
    return [...this.workers.values()]
      .sort((a, b) => (a.workerId < b.workerId ? -1 : 1))
      .map((w) => ({
        worker_id: w.workerId,
        model_name: this.model,
        tenant_id: "default",
        block_size: w.blockSize,
        dp_start: w.dpStart,
        dp_size: w.dpSize,
      }));
  }

  /** `GET /loads` rows, without the requests in `expired`. */
  loadRows(expired: ReadonlySet<string> = new Set()): object[] {
    return this.ranks().map(({ workerId, rank }) => {
      const live = this.live(workerId, rank, expired);
      return {
        model_name: this.model,
        tenant_id: "default",
        worker_id: workerId,
        dp_rank: rank,
        active_prefill_tokens: prefill(live),
        active_decode_blocks: BigInt(new Set(live.flatMap((r) => r.hashes)).size),
      };
    });
  }

  /** `POST /potential_loads` rows (SPEC §3), without the requests in `expired`. */
  potentialRows(query: bigint[], tokens: bigint, expired: ReadonlySet<string> = new Set()): object[] {
    return this.ranks().map(({ workerId, rank }) => {
      const live = this.live(workerId, rank, expired);
      const overlap = Math.max(0, ...live.map((r) => commonPrefix(r.hashes, query)));
      return {
        worker_id: workerId,
        dp_rank: rank,
        potential_prefill_tokens: prefill(live) + tokens,
        potential_decode_blocks: BigInt(new Set(live.flatMap((r) => r.hashes)).size + query.length - overlap),
        active_requests: BigInt(live.length),
      };
    });
  }
}

function prefill(live: ModelRequest[]): bigint {
  return live.reduce((sum, r) => sum + (r.prefillDone ? 0n : r.tokens), 0n);
}

function commonPrefix(a: bigint[], b: bigint[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Parses a JSON answer with every integer literal as a bigint, so nothing is rounded or mistyped. */
export function parseExact(text: string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && /^-?\d+$/.test(context?.source ?? "") ? BigInt(context!.source!) : value;
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
}
