/*
 * XXH3-64 for the Worker: xxHash's own implementation (`xxhash.h`, XXH3_64bits_withSeed), compiled
 * to a WebAssembly module that wrangler uploads compiled, since workerd refuses WebAssembly
 * compiled at run time. `build.sh` builds it; `../xxh3-wasm.ts` loads it and owns its memory.
 */
#define XXH_INLINE_ALL
#define XXH_NO_STREAM
#include "xxhash.h"

typedef unsigned long long u64;
typedef unsigned int u32;

/* out[i] = XXH3-64(bytes[i × stride ..< i × stride + window], seed) for every i < count. */
__attribute__((export_name("blocks"))) void blocks(const unsigned char *bytes, u32 count, u32 stride, u32 window,
                                                   u64 seed, u64 *out) {
  for (u32 i = 0; i < count; i++) out[i] = XXH3_64bits_withSeed(bytes + (unsigned long)i * stride, window, seed);
}

/*
 * Chains hashes[0 ..< count] in place: hashes[i] = XXH3-64(LE64(hashes[i − 1]) ‖ LE64(hashes[i]), seed)
 * for 0 < i < count. WebAssembly is little-endian, so those 16 bytes are where the two entries lie.
 */
__attribute__((export_name("chain"))) void chain(u64 *hashes, u32 count, u64 seed) {
  for (u32 i = 1; i < count; i++) hashes[i] = XXH3_64bits_withSeed(hashes + i - 1, 16, seed);
}

/* XXH3-64 of bytes[0 ..< length] under seed. */
__attribute__((export_name("hash"))) u64 hash(const unsigned char *bytes, u32 length, u64 seed) {
  return XXH3_64bits_withSeed(bytes, length, seed);
}
