/**
 * XXH3-64 with a 64-bit seed (xxHash 0.8's `XXH3_64bits_withSeed`, the `xxh3_64_with_seed` that
 * Dynamo hashes prompts with): xxHash's own C implementation compiled to WebAssembly
 * (`wasm/xxh3.c`, built by `wasm/build.sh`).
 *
 * Why WebAssembly, and imported so: a prompt's hashes are on the path of every select, and the
 * JavaScript port this replaced hashed a 16,384-token prompt (block size 16, public) in 215 µs where
 * this takes 37 µs, half of it reading the token ids into bytes; XXH3 of 64 KiB went from 53 µs to
 * 7.3 µs (`npm run bench`, its hashing part, in Node). workerd refuses WebAssembly compiled
 * at run time ("Wasm code generation disallowed by embedder"), which rules out the npm packages
 * that embed their WASM as bytes (hash-wasm, xxhash-wasm); a `.wasm` file imported as a module is
 * compiled by wrangler at upload, and `new WebAssembly.Instance` of it is allowed. The Node
 * environments (unit tests, the bench) load the same file through a loader of their own
 * (`wasm/loaders.mjs`), so every environment runs the same bytes.
 *
 * Memory: the module's linear memory holds its stack and, above it, one scratch region that each
 * call copies its input into and its results out of; long inputs go through it a chunk at a time,
 * so the memory stays at its first 128 KiB for any prompt whose blocks are at most 12,288 tokens.
 * Only one input longer than the scratch (such a block, or `xxh3Hash` of a very long text) grows
 * it, once, to that input's length.
 */
import compiled from "./wasm/xxh3.wasm";

interface Xxh3Exports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  blocks(bytes: number, count: number, stride: number, window: number, seed: bigint, out: number): void;
  chain(hashes: number, count: number, seed: bigint): void;
  hash(bytes: number, length: number, seed: bigint): bigint;
}

const wasm = new WebAssembly.Instance(compiled, {}).exports as unknown as Xxh3Exports;
/** Where the scratch region starts: above the stack, 8-aligned for u64 reads and writes. */
const SCRATCH = align8(Number(wasm.__heap_base.value));
/** Input bytes a call takes at a time (its results follow them in the scratch region). */
const CHUNK_BYTES = 48 * 1024;
const PAGE = 64 * 1024;

/**
 * `out[i]` = XXH3-64 of `input[i × stride ..< i × stride + window]` under `seed`, for each of
 * `out.length` blocks; `input` must hold `(out.length − 1) × stride + window` bytes.
 */
export function blockHashesInto(
  input: Uint8Array,
  stride: number,
  window: number,
  seed: bigint,
  out: BigUint64Array,
): void {
  const perCall = Math.max(1, Math.floor((CHUNK_BYTES - (window - stride)) / stride));
  for (let first = 0; first < out.length; first += perCall) {
    const count = Math.min(perCall, out.length - first);
    const bytes = (count - 1) * stride + window;
    const results = SCRATCH + align8(bytes);
    const memory = scratch(results - SCRATCH + 8 * count);
    new Uint8Array(memory, SCRATCH, bytes).set(input.subarray(first * stride, first * stride + bytes));
    wasm.blocks(SCRATCH, count, stride, window, seed, results);
    out.set(new BigUint64Array(memory, results, count), first);
  }
}

/**
 * Chains `hashes` in place: each `hashes[i]` (i > 0) becomes
 * `xxh3_64(LE64(hashes[i − 1]) ‖ LE64(hashes[i]), seed)`, in order.
 */
export function chainHashesInPlace(hashes: BigUint64Array, seed: bigint): void {
  const perCall = CHUNK_BYTES / 8;
  // Each call starts from the last hash the previous one chained.
  for (let first = 0; first + 1 < hashes.length; first += perCall - 1) {
    const count = Math.min(perCall, hashes.length - first);
    const words = new BigUint64Array(scratch(8 * count), SCRATCH, count);
    words.set(hashes.subarray(first, first + count));
    wasm.chain(SCRATCH, count, seed);
    hashes.set(words.subarray(1), first + 1);
  }
}

/** A u64 seed as (high, low) u32 halves, for the JavaScript 16-byte path (`xxh3-short.ts`). */
export function seedHalves(seed: bigint): [hi: number, lo: number] {
  return [Number(BigInt.asUintN(32, seed >> 32n)), Number(BigInt.asUintN(32, seed))];
}

/** XXH3-64 of `bytes` under a u64 `seed` (reduced modulo 2^64). */
export function xxh3Hash(bytes: Uint8Array, seed = 0n): bigint {
  new Uint8Array(scratch(bytes.byteLength), SCRATCH, bytes.byteLength).set(bytes);
  return BigInt.asUintN(64, wasm.hash(SCRATCH, bytes.byteLength, seed));
}

const UTF8 = new TextEncoder();

/** XXH3-64 of a string's UTF-8 bytes. */
export function xxh3String(text: string, seed = 0n): bigint {
  return xxh3Hash(UTF8.encode(text), seed);
}

/** The module's memory with room for `bytes` in the scratch region (grown if it has not). */
function scratch(bytes: number): ArrayBuffer {
  const short = SCRATCH + bytes - wasm.memory.buffer.byteLength;
  if (short > 0) wasm.memory.grow(Math.ceil(short / PAGE));
  return wasm.memory.buffer;
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
