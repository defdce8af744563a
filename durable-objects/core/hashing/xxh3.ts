/**
 * XXH3-64 with a 64-bit seed (xxHash 0.8's `XXH3_64bits_withSeed`, the `xxh3_64_with_seed` that
 * Dynamo hashes prompts with), in plain JavaScript.
 *
 * Why our own: workerd refuses WebAssembly compiled at run time ("Wasm code generation disallowed by
 * embedder"), so the WASM packages (hash-wasm, xxhash-wasm) cannot run in the Worker, and no pure-JS
 * package on npm has XXH3-64: js-xxhash has XXH32 only, xxhashjs, @adviser/ts-xxhash and
 * @pacote/xxhash have XXH32/XXH64, and xxh3-ts has XXH3-128 alone, on `bigint` and Node's `Buffer`.
 * So this follows the algorithm's spec (xxHash's `doc/xxhash_spec.md` and `xxhash.h`, scalar paths)
 * and is checked against hash-wasm's XXH3 at every length 0..2048 and random seeds
 * (`test/unit/xxh3.test.ts`).
 *
 * Why it is shaped so: `bigint` arithmetic allocates per operation, so every u64 is a pair of u32
 * halves (`u64-halves.ts`). Input is read through a `DataView`, so a prompt's token bytes are hashed
 * where they lie (a view over the token array, no copy), and results are written as halves into the
 * words of a `BigUint64Array`, so hashing a prompt makes no `bigint` per block. The seeded keys of the
 * 17–240 byte paths are computed once per seed (`mixKeysForSeed`), and the long path carries its
 * accumulators' sums lazily (`xxh3-long.ts`). `node bench/hashing/main.mjs` measures it: on 64 KiB,
 * about a third of hash-wasm's WASM speed, near Node's native SHA-1.
 */
import { HI_WORD, LO_WORD, mul64, mul128Fold, reg } from "./u64-halves";
import { hashLongInto } from "./xxh3-long";
import { MIDSIZE_LAST_LANE, mixKeysForSeed, PRIME64_1_HI, PRIME64_1_LO } from "./xxh3-secret";
import { avalancheInto, hash0Into, hash1to3Into, hash4to8Into, hash9to16Into } from "./xxh3-short";

/** `XXH3_mix16B`, added into the running (high, low) sum that its caller keeps in `mix`. */
const mix = new Float64Array(2);

function mix16B(input: DataView, at: number, keys: Uint32Array, lane: number): void {
  const k = 4 * lane;
  mul128Fold(
    (input.getUint32(at + 4, true) ^ keys[k]!) >>> 0,
    (input.getUint32(at, true) ^ keys[k + 1]!) >>> 0,
    (input.getUint32(at + 12, true) ^ keys[k + 2]!) >>> 0,
    (input.getUint32(at + 8, true) ^ keys[k + 3]!) >>> 0,
  );
  const l = mix[1]! + reg[1]!;
  mix[0] = (mix[0]! + reg[0]! + (l > 0xffffffff ? 1 : 0)) >>> 0;
  mix[1] = l >>> 0;
}

/** 17–128 bytes: pairs of 16-byte reads from both ends, working inwards. */
function hash17to128Into(
  input: DataView,
  at: number,
  length: number,
  keys: Uint32Array,
  out: Uint32Array,
  outAt: number,
): void {
  mul64(0, length, PRIME64_1_HI, PRIME64_1_LO);
  mix[0] = reg[0]!;
  mix[1] = reg[1]!;
  const end = at + length;
  if (length > 32) {
    if (length > 64) {
      if (length > 96) {
        mix16B(input, at + 48, keys, 6);
        mix16B(input, end - 64, keys, 7);
      }
      mix16B(input, at + 32, keys, 4);
      mix16B(input, end - 48, keys, 5);
    }
    mix16B(input, at + 16, keys, 2);
    mix16B(input, end - 32, keys, 3);
  }
  mix16B(input, at, keys, 0);
  mix16B(input, end - 16, keys, 1);
  avalancheInto(mix[0]!, mix[1]!, out, outAt);
}

/** 129–240 bytes: eight 16-byte rounds, an avalanche, then the rest and the last 16 bytes. */
function hash129to240Into(
  input: DataView,
  at: number,
  length: number,
  keys: Uint32Array,
  out: Uint32Array,
  outAt: number,
): void {
  mul64(0, length, PRIME64_1_HI, PRIME64_1_LO);
  mix[0] = reg[0]!;
  mix[1] = reg[1]!;
  for (let i = 0; i < 8; i++) mix16B(input, at + 16 * i, keys, i);
  avalancheInto(mix[0]!, mix[1]!, out, outAt);
  mix[0] = out[outAt + HI_WORD]!;
  mix[1] = out[outAt + LO_WORD]!;
  const rounds = Math.floor(length / 16);
  for (let i = 8; i < rounds; i++) mix16B(input, at + 16 * i, keys, i);
  mix16B(input, at + length - 16, keys, MIDSIZE_LAST_LANE);
  avalancheInto(mix[0]!, mix[1]!, out, outAt);
}

/**
 * Writes the XXH3-64 of `input[at ..< at + length]` under the seed `(seedHi, seedLo)` into
 * `out[outAt ..< outAt + 2]` as u32 halves (see `LO_WORD`), so that `out` may be the words of a
 * `BigUint64Array` and `outAt` twice an element's index.
 */
export function xxh3Into(
  input: DataView,
  at: number,
  length: number,
  seedHi: number,
  seedLo: number,
  out: Uint32Array,
  outAt: number,
): void {
  if (length > 240) hashLongInto(input, at, length, seedHi, seedLo, out, outAt);
  else if (length > 128) hash129to240Into(input, at, length, mixKeysForSeed(seedHi, seedLo), out, outAt);
  else if (length > 16) hash17to128Into(input, at, length, mixKeysForSeed(seedHi, seedLo), out, outAt);
  else if (length > 8) {
    const ah = input.getUint32(at + 4, true);
    const al = input.getUint32(at, true);
    const bh = input.getUint32(at + length - 4, true);
    const bl = input.getUint32(at + length - 8, true);
    hash9to16Into(ah, al, bh, bl, length, seedHi, seedLo, out, outAt);
  } else if (length >= 4) hash4to8Into(input, at, length, seedHi, seedLo, out, outAt);
  else if (length > 0) hash1to3Into(input, at, length, seedHi, seedLo, out, outAt);
  else hash0Into(seedHi, seedLo, out, outAt);
}

/** A u64 seed as (high, low) u32 halves. */
export function seedHalves(seed: bigint): [hi: number, lo: number] {
  return [Number(BigInt.asUintN(32, seed >> 32n)), Number(BigInt.asUintN(32, seed))];
}

const UTF8 = new TextEncoder();
const one = new BigUint64Array(1);
const oneWords = new Uint32Array(one.buffer);

/** XXH3-64 of `bytes` under a u64 `seed` (reduced modulo 2^64). */
export function xxh3Hash(bytes: Uint8Array, seed = 0n): bigint {
  const [seedHi, seedLo] = seedHalves(seed);
  xxh3Into(
    new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    0,
    bytes.byteLength,
    seedHi,
    seedLo,
    oneWords,
    0,
  );
  return one[0]!;
}

/** XXH3-64 of a string's UTF-8 bytes. */
export function xxh3String(text: string, seed = 0n): bigint {
  return xxh3Hash(UTF8.encode(text), seed);
}
