/**
 * What the engine KV-event decoder takes and gives (SPEC §9). The ops it gives are the tracker
 * object's RPC vocabulary (`durable-objects/kv-event-types.ts`); this module adds only the call's
 * own inputs and the outcome the route answers with.
 */
import type { KvEventBatch } from "../../../durable-objects/kv-event-types";

export interface KvDecodeOptions {
  /**
   * The call's `dp_rank` (query string): the rank of the batches that name none. It only keys what
   * stored events teach about KV-cache groups (`groups.ts`); the route still decides each batch's rank.
   */
  dpRank?: number | null;
}

export type KvDecodeResult =
  | {
      ok: true;
      /** One per MessagePack value of the body, in order, each with the ops of its events kept. */
      batches: KvEventBatch[];
      /** Events read, over all batches, kept or skipped. */
      events: number;
      /** Engine hashes in the ops kept: stored blocks plus removed blocks. */
      blocks: number;
      /** Events left out: unknown kinds, and events Dynamo's event path would not index (see `ops.ts`). */
      skipped: number;
    }
  | {
      ok: false;
      /** 400 malformed (bytes or shapes), 413 over a per-call cap, 422 well formed but inconsistent. */
      status: 400 | 413 | 422;
      /** What and where: `batch i, event j: field …`. */
      error: string;
    };
