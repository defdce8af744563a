/**
 * Which hash the tracker's active-load state uses (`router_tracking_hash`, reference §3.3). Dynamo
 * reads the key from a file; here it is the secret `ROUTER_TRACKING_KEY` (the 32 key bytes in
 * base64) beside the var `ROUTER_TRACKING_KEY_ID`, and the optional var `ROUTER_TRACKING_HASH` names
 * the algorithm as Dynamo's flag does. Without it the algorithm follows the settings: keyed when a key
 * or a key id is set, so a half-done keyed setup is refused instead of silently hashing in public.
 * Problems are Dynamo's startup texts, which still name its flags.
 */

export const PUBLIC_XXH3_V1 = "public-xxh3-v1";
export const KEYED_XXH3_V1 = "keyed-xxh3-v1";
export type TrackingHashAlgorithm = typeof PUBLIC_XXH3_V1 | typeof KEYED_XXH3_V1;

/** `KEY_SIZE`: the provider key is exactly 32 bytes. */
export const TRACKING_KEY_BYTES = 32;

export type TrackingHash =
  | { algorithm: typeof PUBLIC_XXH3_V1 }
  | {
      algorithm: typeof KEYED_XXH3_V1;
      /** The key's epoch: non-empty, without surrounding whitespace. */
      keyId: string;
      /** The provider key, 32 bytes. Never logged. */
      key: Uint8Array;
    };

export const PUBLIC_TRACKING: TrackingHash = { algorithm: PUBLIC_XXH3_V1 };

export type TrackingHashConfig = { ok: true; tracking: TrackingHash } | { ok: false; problem: string };

export interface TrackingHashEnv {
  /** `public-xxh3-v1` or `keyed-xxh3-v1`; unset: keyed when a key or a key id is set. */
  ROUTER_TRACKING_HASH?: string;
  /** Secret: the 32-byte provider key, base64. */
  ROUTER_TRACKING_KEY?: string;
  /** The key's epoch; it enters every keyed hash, so a new key gets a new id. */
  ROUTER_TRACKING_KEY_ID?: string;
}

/** Reads the settings. An empty variable counts as unset. */
export function trackingHashOf(env: TrackingHashEnv): TrackingHashConfig {
  const key = env.ROUTER_TRACKING_KEY || undefined;
  const keyId = env.ROUTER_TRACKING_KEY_ID || undefined;
  let algorithm: TrackingHashAlgorithm;
  const named = env.ROUTER_TRACKING_HASH || undefined;
  if (named === undefined)
    algorithm = key !== undefined || keyId !== undefined ? KEYED_XXH3_V1 : PUBLIC_XXH3_V1;
  else if (named === PUBLIC_XXH3_V1 || named === KEYED_XXH3_V1) algorithm = named;
  else {
    return {
      ok: false,
      problem: `router_tracking_hash must be public-xxh3-v1 or keyed-xxh3-v1, got ${JSON.stringify(named)}`,
    };
  }
  const invalid = validateTrackingHashOptions(algorithm, key !== undefined, keyId);
  if (invalid !== undefined) return { ok: false, problem: invalid };
  if (algorithm === PUBLIC_XXH3_V1) return { ok: true, tracking: PUBLIC_TRACKING };
  const bytes = base64Bytes(key!);
  if (bytes === undefined) return { ok: false, problem: "failed to read router tracking key file" };
  if (bytes.length !== TRACKING_KEY_BYTES) {
    return {
      ok: false,
      problem: `router tracking key file must contain exactly ${TRACKING_KEY_BYTES} raw bytes; found ${bytes.length}`,
    };
  }
  return { ok: true, tracking: { algorithm, keyId: keyId!, key: bytes } };
}

/** `validate_tracking_hash_options`, in its order: a problem's text, or undefined. */
export function validateTrackingHashOptions(
  algorithm: TrackingHashAlgorithm,
  hasKey: boolean,
  keyId: string | undefined,
): string | undefined {
  if (algorithm === PUBLIC_XXH3_V1) {
    return hasKey || keyId !== undefined
      ? "router tracking key options require router_tracking_hash=keyed-xxh3-v1"
      : undefined;
  }
  if (!hasKey) return "keyed-xxh3-v1 requires router_tracking_key_file";
  if (keyId === undefined || keyId === "" || RUST_TRIMMED.test(keyId)) {
    return "keyed-xxh3-v1 requires a nonempty router_tracking_key_id";
  }
  return undefined;
}

/**
 * Whitespace that Rust's `str::trim` removes (Unicode White_Space), at either end. Not JavaScript's
 * `trim`, which also removes U+FEFF and keeps U+0085: an id must be refused exactly where Dynamo
 * refuses it.
 */
const WS = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const RUST_TRIMMED = new RegExp(`^[${WS}]|[${WS}]$`);

function base64Bytes(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}
