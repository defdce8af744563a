/**
 * Request bodies for the HTTP benchmark, in JSON and MessagePack, built from the core benchmark's
 * trace (same ranks, families and prompts). Everything but the request id is encoded once; a request
 * splices its id in, so the load generator spends its time sending, not encoding.
 */
import { encode } from "@msgpack/msgpack";
import { DP_SIZE, promptArray, queryArray, requestOf, WORKER_IDS, WORKERS } from "../core/trace";

export const MODEL = "bench-http";
const MSGPACK = { useBigInt64: true } as const;

export type Format = "json" | "msgpack";

export function headersOf(format: Format): Record<string, string> {
  const type = format === "json" ? "application/json" : "application/msgpack";
  return { "content-type": type, accept: type };
}

/** `/register` bodies for the trace's 8 workers × 8 ranks. */
export function registrations(): string[] {
  return Array.from(
    { length: WORKERS },
    (_, w) =>
      `{"model_name":"${MODEL}","worker_id":${WORKER_IDS[w]},"block_size":16,"dp_start":0,"dp_size":${DP_SIZE}}`,
  );
}

/** An add's fields other than the tracker and the id, for trace request `i`. */
function addFields(i: number) {
  const r = requestOf(i);
  return {
    worker_id: WORKER_IDS[r.worker]!,
    dp_rank: r.dpRank,
    sequence_hashes: Array.from(promptArray(i, r.family)),
    new_isl_tokens: r.newIslTokens,
  };
}

const json = (fields: ReturnType<typeof addFields>) =>
  `"worker_id":${fields.worker_id},"dp_rank":${fields.dp_rank},"sequence_hashes":[${fields.sequence_hashes.join(",")}],"new_isl_tokens":${fields.new_isl_tokens}`;

/** A MessagePack map's entries without its header (a fixmap: one byte), and their count. */
function entries(value: Record<string, unknown>): { bytes: Uint8Array; count: number } {
  return { bytes: encode(value, MSGPACK).subarray(1), count: Object.keys(value).length };
}

const concat = (parts: Uint8Array[]) => Buffer.concat(parts);
const fixmap = (count: number) => Uint8Array.of(0x80 | count);
const str = (s: string) => encode(s);

/** Prompts of `count` trace requests, pre-encoded, and the single-request bodies built on them. */
export class AddBodies {
  private readonly jsonTails: string[];
  private readonly packed: { bytes: Uint8Array; count: number }[];

  constructor(count: number) {
    const fields = Array.from({ length: count }, (_, i) => addFields(i));
    this.jsonTails = fields.map(json);
    this.packed = fields.map(entries);
  }

  add(format: Format, n: number, id: string): string | Buffer {
    const k = n % this.packed.length;
    if (format === "json") return `{"model_name":"${MODEL}","request_id":"${id}",${this.jsonTails[k]}}`;
    const rest = this.packed[k]!;
    return concat([
      fixmap(rest.count + 2),
      str("model_name"),
      str(MODEL),
      str("request_id"),
      str(id),
      rest.bytes,
    ]);
  }

  /** One `/batch` op map: `{op: "add", request_id, …}`. */
  addOp(n: number, id: string): Uint8Array {
    const rest = this.packed[n % this.packed.length]!;
    return concat([fixmap(rest.count + 2), str("op"), str("add"), str("request_id"), str(id), rest.bytes]);
  }
}

export function free(format: Format, id: string): string | Buffer {
  if (format === "json") return `{"model_name":"${MODEL}","request_id":"${id}"}`;
  return Buffer.from(encode({ model_name: MODEL, request_id: id }));
}

export function idOp(op: "prefill_complete" | "free", id: string): Uint8Array {
  return encode({ op, request_id: id });
}

/** A `/batch` body around pre-encoded op maps. */
export function batch(ops: Uint8Array[]): Buffer {
  const header = Buffer.alloc(3);
  header[0] = 0xdc;
  header.writeUInt16BE(ops.length, 1);
  return concat([fixmap(2), str("model_name"), str(MODEL), str("ops"), header, ...ops]);
}

/** `count` 128-block `/potential_loads` bodies, each continuing one of the first `live` trace prompts. */
export function potentialLoads(format: Format, count: number, live: number): (string | Buffer)[] {
  return Array.from({ length: count }, (_, q) => {
    const i = (q * 7919) % live;
    const hashes = Array.from(queryArray(i, requestOf(i).family, q));
    if (format === "json") {
      return `{"model_name":"${MODEL}","sequence_hashes":[${hashes.join(",")}],"new_isl_tokens":1024}`;
    }
    return Buffer.from(encode({ model_name: MODEL, sequence_hashes: hashes, new_isl_tokens: 1024 }, MSGPACK));
  });
}
