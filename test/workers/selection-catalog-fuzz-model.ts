/**
 * The catalog fuzz's model and its calls (`selection-catalog-fuzz.test.ts`): which worker ids the
 * catalog holds, in which routing group, with which fields, and what the judgement of reference
 * selection §7 makes of them. Worker ids are service-wide, so each run draws its own from slots.
 */
import fc from "fast-check";

/** Two routing groups of one model; the second is exactly 256 UTF-8 bytes, the longest name allowed. */
export const GROUPS = ["default", "ü".repeat(128)] as const;
export const SLOTS = 5;

/**
 * The ids of run `run`, one per slot: small ones, one above 2^53 (a double would round it), one
 * above 2^63 (an i64 would wrap it) and one at 2^64 − 1 in the first run, walking down after it.
 */
export function idsOf(run: number): bigint[] {
  const r = BigInt(run) * 16n;
  return [r + 1n, r + 2n, 2n ** 53n + r + 1n, 2n ** 63n + r, 2n ** 64n - 1n - r];
}

/** A record's fields the model follows, as the wire writes them (absent as `null`). */
export const TRACKED = [
  "endpoint",
  "block_size",
  "data_parallel_start_rank",
  "data_parallel_size",
  "max_num_batched_tokens",
  "total_kv_blocks",
  "stable_routing_id",
  "is_eagle",
  "taints",
  "topology_domains",
  "kv_transfer_enforcement",
  "kv_transfer_preferred_weight",
] as const;

export type Fields = Record<string, unknown>;

const weighted = <T>(...choices: [T, number][]) =>
  fc.oneof(...choices.map(([value, weight]) => ({ arbitrary: fc.constant(value), weight })));

/**
 * Body fields of a valid POST or PATCH, each possibly absent. Block size 4 and no eagle flag are the
 * common case, so most partitions agree and the model can tell `schedulable` from `incomplete`.
 * `lifecycle`, `not_schedulable_reasons` and `tenant_id` are not request fields: they are ignored.
 */
export const fields: fc.Arbitrary<Fields> = fc.record(
  {
    endpoint: weighted<string | null>(
      ["http://w:8000", 6],
      ["", 1],
      [null, 1],
      ["é".repeat(1024), 1],
      ["x".repeat(2048), 1],
    ),
    block_size: weighted<number | null>([4, 6], [8, 1], [0, 1], [null, 1]),
    data_parallel_start_rank: fc.constantFrom(0, 1, 6, 0xffff_ffff),
    data_parallel_size: weighted([1, 3], [2, 2], [4, 1], [0, 1]),
    max_num_batched_tokens: fc.constantFrom<number | bigint>(0, 8192, 2n ** 64n - 1n),
    total_kv_blocks: fc.constantFrom<number | bigint>(0, 2n ** 53n + 1n),
    stable_routing_id: fc.constantFrom("r-1", ""),
    is_eagle: weighted<boolean | null>([false, 2], [null, 2], [true, 1]),
    taints: fc.array(fc.constantFrom("", "gpu", "zone-a", "é"), { maxLength: 3 }),
    topology_domains: fc.constantFrom({}, { rack: "r1" }, { zone: "z", rack: "r1" }),
    kv_transfer_enforcement: fc.constantFrom("required", "preferred", null),
    kv_transfer_preferred_weight: fc.constantFrom(0.5, 0.1, 1),
    lifecycle: fc.constantFrom("draining", "unschedulable", 7),
    not_schedulable_reasons: fc.constant(["endpoint is required"]),
    tenant_id: fc.constant("other"),
  },
  { requiredKeys: [] },
);

/** `{worker_id}` as Rust's `u64::from_str` also reads it: a `+` sign or leading zeros name the same id. */
export type IdForm = "plain" | "plus" | "zeros";
export const idForm = weighted<IdForm>(["plain", 3], ["plus", 1], ["zeros", 1]);

export function pathId(id: bigint, form: IdForm): string {
  return form === "plus" ? `+${id}` : form === "zeros" ? `00${id}` : `${id}`;
}

export type Valid =
  | { kind: "post"; slot: number; group: number; omitGroup: boolean; fields: Fields }
  | { kind: "patch"; slot: number; form: IdForm; fields: Fields; ignored: Fields }
  | { kind: "delete"; slot: number; form: IdForm };

const slot = fc.integer({ min: 0, max: SLOTS - 1 });
const group = fc.integer({ min: 0, max: GROUPS.length - 1 });

export const valid: fc.Arbitrary<Valid> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("post" as const),
      slot,
      group,
      omitGroup: fc.boolean(),
      fields,
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("patch" as const),
      slot,
      form: idForm,
      fields,
      // A PATCH has no partition fields: naming one moves nothing.
      ignored: fc.constantFrom({}, { routing_group: GROUPS[1] }, { model_name: "elsewhere", worker_id: 3 }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant("delete" as const), slot, form: idForm }), weight: 1 },
);

/** The ids the catalog holds, by slot: each one's routing group and tracked fields. */
export class CatalogModel {
  readonly held = new Map<number, { group: number; fields: Fields }>();

  apply(op: Valid): number {
    switch (op.kind) {
      case "post":
        this.held.set(op.slot, { group: op.group, fields: posted(op.fields) });
        return 201;
      case "patch": {
        const held = this.held.get(op.slot);
        if (held === undefined) return 404;
        for (const key of TRACKED) {
          const value = op.fields[key];
          if (value !== undefined && value !== null)
            held.fields[key] = key === "taints" ? taintSet(value) : value;
        }
        return 200;
      }
      case "delete":
        return this.held.delete(op.slot) ? 200 : 404;
    }
  }

  /**
   * Reasons 1–3 of reference selection §7 when any is missing; otherwise the record reaches
   * reconciliation, and `undefined` says the model cannot tell its outcome: some worker of the group
   * has another block size or eagle flag, and which one fixed the partition depends on history.
   */
  reasons(slot: number): string[] | undefined {
    const held = this.held.get(slot)!;
    const own = missing(held.fields);
    if (own.length > 0) return own;
    return this.agrees(held.group) ? [] : undefined;
  }

  /** Whether every worker of `group` with a block size has the same one and the same eagle flag. */
  agrees(group: number): boolean {
    return this.fixesOf(group).size <= 1;
  }

  /** Whether `group` would agree with `slot` written there with `blockSize` and `isEagle`. */
  agreesWith(group: number, slot: number, blockSize: number, isEagle: boolean): boolean {
    const fixes = this.fixesOf(group, slot);
    return fixes.size === 0 || (fixes.size === 1 && fixes.has(`${blockSize}/${isEagle}`));
  }

  private fixesOf(group: number, except?: number): Set<string> {
    const fixes = new Set<string>();
    for (const [slot, held] of this.held) {
      if (held.group !== group || slot === except) continue;
      const size = held.fields.block_size;
      if (typeof size === "number" && size > 0) fixes.add(`${size}/${held.fields.is_eagle === true}`);
    }
    return fixes;
  }
}

function missing(f: Fields): string[] {
  const reasons: string[] = [];
  if (f.endpoint === null || f.endpoint === "") reasons.push("endpoint is required");
  if (f.block_size === null || f.block_size === 0) reasons.push("block_size must be greater than 0");
  if (f.data_parallel_size === 0) reasons.push("data_parallel_size must be greater than 0");
  return reasons;
}

/** A POST is a full replace: every field not sent is `null` (the collections empty). */
function posted(body: Fields): Fields {
  const out: Fields = {};
  for (const key of TRACKED) out[key] = body[key] ?? null;
  out.taints = taintSet(body.taints ?? []);
  out.topology_domains = body.topology_domains ?? {};
  return out;
}

const utf8 = new TextEncoder();

function compareUtf8(a: string, b: string): number {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** Taints are a set: duplicates collapse, and the wire lists them in UTF-8 byte order. */
function taintSet(value: unknown): string[] {
  return [...new Set(value as string[])].sort(compareUtf8);
}

/** Integers as bigint whatever their size or encoding, so a JSON and a MessagePack answer compare. */
export function normal(value: unknown): unknown {
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(normal);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normal(v)]));
  }
  return value;
}
