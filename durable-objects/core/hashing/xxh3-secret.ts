/**
 * XXH3's constants: its primes, its 192-byte default secret (`XXH3_kSecret`, xxHash 0.8) and the
 * secret a seed derives for inputs over 240 bytes (`XXH3_initCustomSecret`).
 */

export const PRIME32_1 = 0x9e3779b1;
export const PRIME32_2 = 0x85ebca77;
export const PRIME32_3 = 0xc2b2ae3d;
export const PRIME64_1_HI = 0x9e3779b1;
export const PRIME64_1_LO = 0x85ebca87;
export const PRIME64_2_HI = 0xc2b2ae3d;
export const PRIME64_2_LO = 0x27d4eb4f;
export const PRIME64_3_HI = 0x165667b1;
export const PRIME64_3_LO = 0x9e3779f9;
export const PRIME64_4_HI = 0x85ebca77;
export const PRIME64_4_LO = 0xc2b2ae63;
export const PRIME64_5_HI = 0x27d4eb2f;
export const PRIME64_5_LO = 0x165667c5;
/** `PRIME_MX1`, XXH3's avalanche multiplier. */
export const MX1_HI = 0x16566791;
export const MX1_LO = 0x9e3779f9;
/** `PRIME_MX2`, the 4–8 byte path's (`rrmxmx`) multiplier. */
export const MX2_HI = 0x9fb21c65;
export const MX2_LO = 0x1e98df25;

export const SECRET_SIZE = 192;

const DEFAULT_SECRET_HEX =
  "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f" +
  "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c" +
  "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8" +
  "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364" +
  "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e" +
  "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e";

function secretFromHex(hex: string): DataView {
  const bytes = new Uint8Array(SECRET_SIZE);
  for (let i = 0; i < SECRET_SIZE; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return new DataView(bytes.buffer);
}

/** The default secret, read as little-endian words at any byte offset. */
export const DEFAULT_SECRET = secretFromHex(DEFAULT_SECRET_HEX);

/**
 * The last derived secret and its seed. A prompt hashes all its blocks under one seed, so a block
 * size above 60 tokens (blocks over 240 bytes) derives the secret once per prompt, not per block.
 */
const derived = new DataView(new ArrayBuffer(SECRET_SIZE));
let derivedHi = 0;
let derivedLo = 0;
let derivedValid = false;

/**
 * The secret for a seed: each 16-byte lane of the default secret with the seed added to its first
 * u64 and subtracted from its second. Seed 0 derives the default secret itself, which is returned as
 * it is. The view is shared and rewritten by the next seed: use it before deriving another.
 */
export function secretForSeed(seedHi: number, seedLo: number): DataView {
  if (seedHi === 0 && seedLo === 0) return DEFAULT_SECRET;
  if (derivedValid && seedHi === derivedHi && seedLo === derivedLo) return derived;
  for (let off = 0; off < SECRET_SIZE; off += 16) {
    const aLo = DEFAULT_SECRET.getUint32(off, true) + seedLo;
    const aHi = DEFAULT_SECRET.getUint32(off + 4, true) + seedHi + (aLo > 0xffffffff ? 1 : 0);
    derived.setUint32(off, aLo >>> 0, true);
    derived.setUint32(off + 4, aHi >>> 0, true);
    const bLo = DEFAULT_SECRET.getUint32(off + 8, true) - seedLo;
    const bHi = DEFAULT_SECRET.getUint32(off + 12, true) - seedHi - (bLo < 0 ? 1 : 0);
    derived.setUint32(off + 8, bLo >>> 0, true);
    derived.setUint32(off + 12, bHi >>> 0, true);
  }
  derivedHi = seedHi;
  derivedLo = seedLo;
  derivedValid = true;
  return derived;
}

/**
 * `XXH3_mix16B`'s keys, per 16-byte lane of the 17–240 byte paths: lane j < 8 at secret offset 16j
 * (the 17–128 rounds and the 129–240 path's first eight), lanes 8..14 at 16(j − 8) + 3
 * (`XXH3_MIDSIZE_STARTOFFSET`), lane 15 at 136 − 17 (`XXH3_MIDSIZE_LASTOFFSET`, the last 16 bytes).
 */
const MIX_LANE_OFFSETS = [0, 16, 32, 48, 64, 80, 96, 112, 3, 19, 35, 51, 67, 83, 99, 119];
export const MIDSIZE_LAST_LANE = 15;

const mixKeys = new Uint32Array(4 * MIX_LANE_OFFSETS.length);
let mixHi = 0;
let mixLo = 0;
let mixValid = false;

/**
 * Each lane's two keys with the seed applied, `secret[o..] + seed` and `secret[o + 8..] − seed`, as
 * (high, low, high, low) words: what `mix16B` XORs into the input. They depend on the seed alone, and a
 * prompt's blocks share one, so they are computed once per seed instead of at every 16 bytes. Shared
 * like {@link secretForSeed}'s view.
 */
export function mixKeysForSeed(seedHi: number, seedLo: number): Uint32Array {
  if (mixValid && seedHi === mixHi && seedLo === mixLo) return mixKeys;
  for (let lane = 0; lane < MIX_LANE_OFFSETS.length; lane++) {
    const o = MIX_LANE_OFFSETS[lane]!;
    const kl = DEFAULT_SECRET.getUint32(o, true) + seedLo;
    mixKeys[4 * lane] = DEFAULT_SECRET.getUint32(o + 4, true) + seedHi + (kl > 0xffffffff ? 1 : 0);
    mixKeys[4 * lane + 1] = kl;
    const ml = DEFAULT_SECRET.getUint32(o + 8, true) - seedLo;
    mixKeys[4 * lane + 2] = DEFAULT_SECRET.getUint32(o + 12, true) - seedHi - (ml < 0 ? 1 : 0);
    mixKeys[4 * lane + 3] = ml;
  }
  mixHi = seedHi;
  mixLo = seedLo;
  mixValid = true;
  return mixKeys;
}
