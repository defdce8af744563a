/**
 * The soak's independent model: the state of one tracker as the acknowledged operations make it,
 * straight from SPEC §3 (distinct hashes per rank, pending prefill tokens per rank). Integers are
 * bigint throughout, like the Worker's MessagePack answers decoded with `useBigInt64`.
 */

export class TrackerModel {
  /**
   * @param {string} model
   * @param {string} tenant
   * @param {bigint} blockSize
   */
  constructor(model, tenant, blockSize) {
    this.model = model;
    this.tenant = tenant;
    this.blockSize = blockSize;
    /** @type {Map<bigint, { dpStart: bigint, dpSize: bigint }>} */
    this.workers = new Map();
    /** @type {Map<string, { workerId: bigint, rank: bigint, hashes: bigint[], tokens: bigint, prefillDone: boolean, home: string, owner?: string }>} */
    this.requests = new Map();
  }

  register(workerId, dpStart, dpSize) {
    this.workers.set(workerId, { dpStart, dpSize });
  }

  unregister(workerId) {
    this.workers.delete(workerId);
    for (const [id, r] of this.requests) if (r.workerId === workerId) this.requests.delete(id);
  }

  add(id, request) {
    this.requests.set(id, { ...request, prefillDone: false });
  }

  prefillComplete(id) {
    const r = this.requests.get(id);
    if (r) r.prefillDone = true;
  }

  free(id) {
    this.requests.delete(id);
  }

  /** `owner`'s lease lapsed or was deleted: every booking it owned is gone (SPEC §8). */
  freeOwner(owner) {
    for (const [id, r] of this.requests) if (r.owner === owner) this.requests.delete(id);
  }

  ranks() {
    return [...this.workers.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .flatMap(([workerId, { dpStart, dpSize }]) =>
        Array.from({ length: Number(dpSize) }, (_, i) => ({ workerId, rank: dpStart + BigInt(i) })),
      );
  }

  /** `GET /workers` rows. */
  workerRows() {
    return [...this.workers.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([workerId, w]) => ({
        worker_id: workerId,
        model_name: this.model,
        tenant_id: this.tenant,
        block_size: this.blockSize,
        dp_start: w.dpStart,
        dp_size: w.dpSize,
      }));
  }

  /** `GET /loads` rows. */
  loadRows() {
    const byRank = new Map();
    for (const r of this.requests.values()) {
      const key = `${r.workerId}/${r.rank}`;
      const slot = byRank.get(key) ?? { tokens: 0n, hashes: new Set() };
      if (!r.prefillDone) slot.tokens += r.tokens;
      for (const h of r.hashes) slot.hashes.add(h);
      byRank.set(key, slot);
    }
    return this.ranks().map(({ workerId, rank }) => {
      const slot = byRank.get(`${workerId}/${rank}`);
      return {
        model_name: this.model,
        tenant_id: this.tenant,
        worker_id: workerId,
        dp_rank: rank,
        active_prefill_tokens: slot?.tokens ?? 0n,
        active_decode_blocks: BigInt(slot?.hashes.size ?? 0),
      };
    });
  }
}

/** Every integer as a bigint, so answers and the model compare exactly whatever their encoding. */
export function exact(value) {
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(exact);
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, exact(v)]));
  }
  return value;
}

/** A stable text of a value with bigints, for equality checks and failure messages. */
export function show(value) {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}` : v));
}
