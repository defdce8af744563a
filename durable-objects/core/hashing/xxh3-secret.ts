/**
 * The constants of XXH3's 9–16 byte path (`xxh3-short.ts`): its avalanche multiplier and the
 * default secret (`XXH3_kSecret`, xxHash 0.8).
 */

/** `PRIME_MX1`, XXH3's avalanche multiplier. */
export const MX1_HI = 0x16566791;
export const MX1_LO = 0x9e3779f9;
const SECRET_SIZE = 192;

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
