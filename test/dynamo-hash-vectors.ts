/**
 * The worked vectors of reference §3.6 (Dynamo's own test values where it asserts them; the rest
 * recomputed and matching those), shared by the Node and the workerd tests of the hashing module.
 */
import type { BlockMmInfos } from "../durable-objects/core/hashing/block-hashes";

/** `from ..= to`. */
export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** `xxh3_64("test data", 1337)` (protocols.rs `test_router_event_new`). */
export const TEST_DATA_HASH = 13226331709069118873n;

export interface PublicVector {
  name: string;
  tokens: number[];
  blockSize: number;
  loraName?: string;
  cacheSalt?: string;
  isEagle?: boolean;
  blockMmInfos?: BlockMmInfos;
  /** The block seed, where the reference gives it. */
  seed?: bigint;
  blockHashes: bigint[];
  sequenceHashes: bigint[];
}

const B_1_4 = 14643705804678351452n;
const B_5_8 = 16777012769546811212n;

export const PUBLIC_VECTORS: PublicVector[] = [
  { name: "[1,2,3,4]", tokens: range(1, 4), blockSize: 4, blockHashes: [B_1_4], sequenceHashes: [B_1_4] },
  {
    name: "[1..8]",
    tokens: range(1, 8),
    blockSize: 4,
    blockHashes: [B_1_4, B_5_8],
    sequenceHashes: [B_1_4, 4945711292740353085n],
  },
  {
    name: "[1..12]",
    tokens: range(1, 12),
    blockSize: 4,
    blockHashes: [B_1_4, B_5_8, 483935686894639516n],
    sequenceHashes: [B_1_4, 4945711292740353085n, 12583592247330656132n],
  },
  {
    name: "[0,1,2,3]",
    tokens: range(0, 3),
    blockSize: 4,
    blockHashes: [9143094415614847814n],
    sequenceHashes: [9143094415614847814n],
  },
  {
    name: "lora adapter-a, [1..8]",
    tokens: range(1, 8),
    blockSize: 4,
    loraName: "adapter-a",
    seed: 8842669519798868182n,
    blockHashes: [11381080598872079209n, 5698110331184095209n],
    sequenceHashes: [11381080598872079209n, 17518568667535815909n],
  },
  {
    name: "cache_salt tenant-a, [1..8]",
    tokens: range(1, 8),
    blockSize: 4,
    cacheSalt: "tenant-a",
    seed: 1948188790972764086n,
    blockHashes: [5738685477468498325n, 11202231085456067787n],
    sequenceHashes: [5738685477468498325n, 1076233986426276607n],
  },
  {
    name: "lora and salt, [1..8]",
    tokens: range(1, 8),
    blockSize: 4,
    loraName: "adapter-a",
    cacheSalt: "tenant-a",
    seed: 10790858310771630931n,
    blockHashes: [9967753091837871098n, 17145582438027477403n],
    sequenceHashes: [9967753091837871098n, 8253787442643436499n],
  },
  {
    name: "eagle [1..9] (windows [1..5], [5..9])",
    tokens: range(1, 9),
    blockSize: 4,
    isEagle: true,
    blockHashes: [1914873892905420881n, 1929047464662796003n],
    sequenceHashes: [1914873892905420881n, 13136491855314414045n],
  },
  {
    name: "mm: block 0 with mm_hashes {42, 7}, block 1 null, [1..8]",
    tokens: range(1, 8),
    blockSize: 4,
    blockMmInfos: [{ mmObjects: [{ mmHash: 42n }, { mmHash: 7n }] }, null],
    blockHashes: [6295130183325757331n, B_5_8],
    sequenceHashes: [6295130183325757331n, 8336207648877405278n],
  },
];

/** What `/select_and_reserve` returns for them: i64 casts. */
export const I64_VECTORS = {
  block_1_4: -3803038269031200164n,
  sequence_1_12: [-3803038269031200164n, 4945711292740353085n, -5863151826378895484n],
};

export interface KeyedVector {
  name: string;
  key: Uint8Array;
  keyId: string;
  modelName: string;
  routingGroup: string;
  blockSize: number;
  tokens: number[];
  cacheSalt?: string;
  loraName?: string;
  isEagle?: boolean;
  blockMmInfos?: BlockMmInfos;
  sequenceHashes: bigint[];
}

/** Dynamo's `tracking_hash.rs` tests (asserted there). */
export const KEYED_VECTORS: KeyedVector[] = [
  {
    name: "scope and chain framing (key 0x5a, model-a / tenant-a, salt cache-a, lora adapter-a)",
    key: new Uint8Array(32).fill(0x5a),
    keyId: "2026-01",
    modelName: "model-a",
    routingGroup: "tenant-a",
    blockSize: 4,
    tokens: range(0, 11),
    cacheSalt: "cache-a",
    loraName: "adapter-a",
    sequenceHashes: [4363769719052127296n, 14998523962162619427n, 13920914207884994756n],
  },
  {
    name: "multimodal block 0 = {42} (key 0x41, model / default)",
    key: new Uint8Array(32).fill(0x41),
    keyId: "2026-01",
    modelName: "model",
    routingGroup: "default",
    blockSize: 4,
    tokens: range(0, 9),
    blockMmInfos: [{ mmObjects: [{ mmHash: 42n }] }, null],
    sequenceHashes: [13077030603177067515n, 12131634976806651614n],
  },
  {
    name: "eagle, no mm (key 0x41, model / default)",
    key: new Uint8Array(32).fill(0x41),
    keyId: "2026-01",
    modelName: "model",
    routingGroup: "default",
    blockSize: 4,
    tokens: range(0, 9),
    isEagle: true,
    sequenceHashes: [18351479723295049348n, 8577555336206814019n],
  },
];

/** `randomized_reservation_uses_canonical_complete_block_count` (bs 4): eagle tokens → blocks. */
export const EAGLE_BLOCK_COUNTS: [tokens: number, blocks: number][] = [
  [0, 0],
  [3, 0],
  [4, 0],
  [5, 1],
  [8, 1],
  [9, 2],
];
