import type { RegisterInput } from "../types";
import { PrefillQueue } from "./prefill-queue";
import type { EventKey } from "./replica/clock";

/** One data-parallel rank of a registered worker: the unit every load figure is reported for. */
export class RankSlot {
  /** Live requests on this rank. */
  requests = 0;
  /** Output blocks of its live requests, in millionths of a block (`Book.addOutputBlock`). */
  outputMicroBlocks = 0;
  readonly prefill = new PrefillQueue();

  constructor(
    /** Dense id used to index per-rank arrays (trie block counts, overlap depths). */
    readonly id: number,
    readonly workerId: bigint,
    readonly dpRank: number,
  ) {}
}

/** A registered worker and its rank slots (`slots[i]` is rank `dpStart + i`). */
export interface WorkerEntry {
  readonly workerId: bigint;
  readonly dpStart: number;
  readonly dpSize: number;
  readonly slots: RankSlot[];
  /** The registration, as given (optional fields only when set). */
  readonly input: RegisterInput;
  /** The change that registered it; settles conflicts between replicas. */
  readonly key: EventKey;
}
