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
/**
 * The two memory caps together keep one tracker's worst case near 85 MB of the isolate's 128 MB
 * (measured in V8 with `--expose-gc`): a live request costs about 270 bytes plus its id (up to 512
 * bytes), so {@link MAX_LIVE_REQUESTS} bounds requests at about 39 MB; a prompt block costs about
 * 23 bytes in the prompt trie when its hash is distinct (shared prefixes cost far less), so
 * {@link MAX_LIVE_BLOCKS} bounds the trie at about 35 MB; the request journal adds at most about
 * 12 MB (`request-journal.ts`). Raise them only for objects known to use short ids and shared prefixes.
 */
/** Live requests in one tracker before `/add` answers 429 (wrangler var `MAX_LIVE_REQUESTS`). */
export const MAX_LIVE_REQUESTS = 50_000;
/**
 * Prompt blocks held by all live requests of one tracker, summed per request, before `/add` answers
 * 429 (wrangler var `MAX_LIVE_BLOCKS`). Without it a client could hold MAX_LIVE_REQUESTS ×
 * MAX_HASHES_PER_CALL ≈ 3 billion blocks. Each block also costs 8 bytes in SQLite.
 */
export const MAX_LIVE_BLOCKS = 1_500_000;
/**
 * Request ids whose prefill timelines a replicated tracker keeps (`core/replica/departure-log.ts`; about
 * 650 bytes each in V8, so about 20 MB at most). Timelines are kept for two expiry ages, so below
 * 25 requests/s (default expiry) nothing is cut; at 1,000 requests/s the window shrinks to 30 s, and
 * decayed prefill stays exact across replicas for changes that reach every replica within it.
 */
export const MAX_PREFILL_TIMELINES = 30_000;
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
/** Bytes of one text field of a worker catalog record (an endpoint URL, a taint, a domain). */
export const MAX_CATALOG_TEXT_BYTES = 2_048;
/**
 * Bytes of all text in one catalog record (names, endpoints, map keys and values, taints), checked
 * after a PATCH merges too: at {@link MAX_WORKERS} records a tracker's catalog stays under 64 MB,
 * and a worker with 64 ranks and a URL per rank in both rank maps still fits.
 */
export const MAX_CATALOG_RECORD_BYTES = 16_384;
/** Default lifetime of a booking's blocks in the approximate cache index, seconds (Dynamo's `DYN_ROUTER_TTL_SECS`). */
export const DEFAULT_ROUTER_TTL_SECS = 120;
/**
 * (Block, rank) entries one tracker's approximate cache index holds before the earliest-due ones are
 * evicted. An entry costs 94 bytes at a million entries and up to about 125 bytes just after the
 * arrays grew (`bench/cache-index/`), so this bounds the index near 25 MB: about 1,500 bookings of
 * 128 distinct blocks, more where ranks renew shared prefixes. A busy tracker
 * reaches it before the TTL does; its `evicted` figure says so.
 */
export const MAX_CACHE_INDEX_ENTRIES = 200_000;
/**
 * (Block, rank) entries one tracker's engine-event cache index holds before the oldest leaves are
 * evicted (SPEC §9; `core/cache-index/event-index.ts`, wrangler var `MAX_CACHED_BLOCKS`). An entry
 * costs about 61 bytes at a million entries (`bench/kv-events/core.ts`: a 48-byte record plus its
 * table slots), so this bounds the index near 31 MB. A worker's blocks live in this index or in the
 * approximate one, never both, so the two fill together only when sourced and unsourced workers
 * share a busy tracker.
 */
export const MAX_CACHED_BLOCKS = 500_000;

/** Live leases one tracker holds before `POST /leases` answers 429 (wrangler var `MAX_LEASES`). */
export const MAX_LEASES = 1_024;
/** Live bookings one owner may hold before an owned booking answers 429 (`MAX_BOOKINGS_PER_OWNER`). */
export const MAX_BOOKINGS_PER_OWNER = 50_000;
/** A lease owner's id, UTF-8 bytes (SPEC §8). */
export const MAX_OWNER_BYTES = 256;
/** A lease's `ttl_ms` bounds (SPEC §8). */
export const MIN_LEASE_TTL_MS = 1_000;
export const MAX_LEASE_TTL_MS = 600_000;
/**
 * Grants one lease keeps (`lease-table.ts`): only renewals that shorten the lease add one, so a
 * steady heartbeat keeps one; past it the middle ones are dropped.
 */
export const MAX_LEASE_STEPS = 8;
/** `OWNED_REQUEST_MAX_AGE_SECONDS`: the age guard that still ends an owned booking whose lease lives. */
export const DEFAULT_OWNED_REQUEST_MAX_AGE_SECONDS = 3_600;

/**
 * Engine KV events in one `POST /kv_events` call, over all its batches (SPEC §9). vLLM publishes one
 * batch per scheduler step, usually a handful of events; a relay that batches a few hundred steps
 * stays well under it, and the cap bounds what one call costs the decoder and the tracker object.
 */
export const MAX_KV_EVENTS_PER_CALL = 4_096;
/**
 * Blocks in one `POST /kv_events` call: the engine hashes of every stored and removed event kept,
 * summed. Each stored block is hashed once from its tokens in the Worker; at 16 tokens a block the
 * cap is a million tokens, the same bound as {@link MAX_HASHES_PER_CALL} on a booking.
 */
export const MAX_KV_BLOCKS_PER_CALL = 65_536;
/** Body bytes of one `POST /kv_events`: room for {@link MAX_KV_BLOCKS_PER_CALL} blocks of 16 tokens (≤ 5 bytes each in MessagePack). */
export const MAX_KV_BODY_BYTES = 8 * 1024 * 1024;
/** UTF-8 bytes of an `x-kv-event-epoch` header. */
export const MAX_KV_EPOCH_BYTES = 128;
