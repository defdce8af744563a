/** Limits of the contract (SPEC §2, §6) and resource caps; one place for all of them. */

/** Bytes of a model name or tenant id. */
export const MAX_NAME_BYTES = 256;
/** Bytes of a request id. */
export const MAX_REQUEST_ID_BYTES = 512;
/** Hashes in one `sequence_hashes` array. */
export const MAX_HASHES_PER_CALL = 65_536;
/** Operations in one `POST /batch`. */
export const MAX_BATCH_OPS = 4_096;
/** Request body bytes (Dynamo's axum default). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Live requests in one tracker before `/add` answers 429 (wrangler var `MAX_LIVE_REQUESTS`). */
export const MAX_LIVE_REQUESTS = 200_000;
/**
 * Prompt blocks held by all live requests of one tracker, summed per request, before `/add` answers
 * 429 (wrangler var `MAX_LIVE_BLOCKS`). Without it a client could hold MAX_LIVE_REQUESTS ×
 * MAX_HASHES_PER_CALL ≈ 13 billion blocks. Each block costs 8 bytes in SQLite and, for distinct
 * hashes, about 27 bytes in the prompt trie (measured in V8), so the default bounds the trie at
 * about 55 MB, well inside the isolate's 128 MB; shared prefixes cost the trie far less.
 */
export const MAX_LIVE_BLOCKS = 2_000_000;
/** Registered workers in one tracker. */
export const MAX_WORKERS = 4_096;
/** Data-parallel rank slots in one tracker (each costs memory even when idle). */
export const MAX_RANKS = 65_536;
/** Default age limit of a live request, seconds (Dynamo: 300). */
export const DEFAULT_REQUEST_EXPIRY_SECONDS = 300;
/** Bytes of a `/route` session id. */
export const MAX_SESSION_ID_BYTES = 256;
/** Session affinity bindings in one tracker; past it, the least recently routed session is unbound. */
export const MAX_SESSION_BINDINGS = 50_000;
