/** fast-check arbitraries of replication events and batches, for the codec's property tests. */
import fc from "fast-check";
import { compareUtf8 } from "../../durable-objects/core/order";
import type { CatalogUpsertEvent, ReplicaEvent } from "../../durable-objects/core/replica/events";
import type { ReplicaBatch } from "../../durable-objects/replication/event-codec";

const U64_MAX = 2n ** 64n - 1n;

/** A plain object without its undefined keys (fast-check records have a null prototype). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function arbitraryBatch(): fc.Arbitrary<ReplicaBatch> {
  const u64 = fc.oneof(
    fc.bigInt({ min: 0n, max: U64_MAX }),
    fc.constantFrom(0n, 1n, 2n ** 32n, 2n ** 63n, U64_MAX),
  );
  const uint = fc.oneof(fc.nat(), fc.maxSafeNat());
  const u32 = fc.nat({ max: 2 ** 32 - 1 });
  const text = fc.string({ unit: "binary", maxLength: 40 });
  const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
  const k = { ts: fc.maxSafeNat(), origin: text };
  const hashList = fc.array(u64, { maxLength: 12 }).map((a) => BigUint64Array.from(a));
  const card = fc.record({
    routerMode: fc.constantFrom("kv" as const, "round_robin" as const, "random" as const),
    overlapScoreWeight: opt(fc.double({ noNaN: true })),
    routerTemperature: opt(fc.double({ min: 0, noNaN: true })),
    sessionAffinityTtlSecs: opt(u32),
  });
  const event: fc.Arbitrary<ReplicaEvent> = fc.oneof(
    fc
      .record({
        ...k,
        type: fc.constant("add" as const),
        requestId: text,
        workerId: u64,
        dpRank: u32,
        hashes: fc.array(u64, { maxLength: 40 }).map((a) => BigUint64Array.from(a)),
        newIslTokens: uint,
        expectedOutputTokens: opt(u32),
        expectedPrefillDurationMs: opt(fc.nat()),
        startedAt: uint,
        deadline: uint,
        cachePrompt: opt(
          fc.option(
            fc
              .record({ blockHashes: hashList, sequenceHashes: opt(hashList) })
              .map(({ blockHashes, sequenceHashes }) =>
                sequenceHashes === undefined ? { blockHashes } : { blockHashes, sequenceHashes },
              ),
            { nil: null },
          ),
        ),
        // An owned booking's owner and grant come together, or not at all.
        owned: opt(fc.record({ owner: text, grant: fc.record({ at: uint, deadline: uint }) })),
      })
      .map(({ owned, ...add }) => (owned ? { ...add, owner: owned.owner, grant: { ...owned.grant } } : add)),
    fc.record({
      ...k,
      type: fc.constant("register" as const),
      workerId: u64,
      blockSize: u32,
      dpStart: u32,
      dpSize: u32,
      workerType: opt(fc.constantFrom("decode" as const, "prefill" as const)),
      routerConfig: opt(card.map(defined)),
      incarnation: opt(u64),
    }),
    fc.record({ ...k, type: fc.constant("unregister" as const), workerId: u64 }),
    fc.record({ ...k, type: fc.constantFrom("free" as const, "prefill_complete" as const), requestId: text }),
    catalogUpsert(u64, u32, text, opt).map((e) => ({ ...e, fields: defined(e.fields) })),
    fc.record({ ...k, type: fc.constant("catalog_remove" as const), workerId: u64 }),
    fc.record({ ...k, type: fc.constant("lease" as const), owner: text, at: uint, deadline: uint }),
    fc.record({ ...k, type: fc.constant("lease_cut" as const), owner: text, at: uint }),
    fc.record({
      ...k,
      type: fc.constant("bind" as const),
      sessionId: text,
      hop: fc.constantFrom("decode" as const, "prefill" as const),
      workerId: u64,
      dpRank: u32,
      expiresAt: uint,
    }),
  );
  return fc
    .record({
      origin: text,
      incarnation: text,
      kind: fc.constantFrom("stream" as const, "snapshot" as const),
      firstSeq: uint,
      upTo: uint,
      final: fc.boolean(),
      events: fc.array(event.map(defined), { maxLength: 10 }),
    })
    .map(defined);
}

/** A catalog upsert whose record's id is its worker's, collections in the order the codec writes them. */
function catalogUpsert(
  u64: fc.Arbitrary<bigint>,
  u32: fc.Arbitrary<number>,
  text: fc.Arbitrary<string>,
  opt: <T>(a: fc.Arbitrary<T>) => fc.Arbitrary<T | undefined>,
): fc.Arbitrary<CatalogUpsertEvent> {
  const key = fc.record({ ts: fc.maxSafeNat(), origin: text });
  const rankMap = fc.uniqueArray(fc.tuple(u32, text), { selector: ([rank]) => rank, maxLength: 3 });
  const range = fc.tuple(u32, u32).map(([a, b]) => ({ start: Math.min(a, b), end: Math.max(a, b) }));
  return fc
    .record({
      key,
      workerId: u64,
      candidacy: key,
      agreed: fc.boolean(),
      keeps: opt(range),
      floors: fc.array(fc.record({ start: u32, end: u32, key }), { maxLength: 3 }),
      fields: fc.record({
        model: text,
        tenant: text,
        endpoint: opt(text),
        kvEventsEndpoint: opt(text),
        kvEventsEndpoints: rankMap.map((pairs) => new Map(pairs)),
        replayEndpoint: opt(text),
        blockSize: opt(u32),
        dpStart: opt(u32),
        dpSize: opt(u32),
        maxNumBatchedTokens: opt(u64),
        totalKvBlocks: opt(u64),
        stableRoutingId: opt(text),
        isEagle: opt(fc.boolean()),
        taints: fc.uniqueArray(text, { maxLength: 3 }).map((taints) => taints.sort(compareUtf8)),
        topologyDomains: fc
          .uniqueArray(fc.tuple(text, text), { selector: ([d]) => d, maxLength: 3 })
          .map((pairs) => new Map(pairs)),
        kvTransferDomain: opt(text),
        kvTransferEnforcement: opt(fc.constantFrom("required" as const, "preferred" as const)),
        kvTransferPreferredWeight: opt(fc.double({ noNaN: true })),
        routerHintWorkerType: opt(text),
        routerHintSourceControlEndpoints: rankMap.map((pairs) => new Map(pairs)),
        kvEventSourceMode: opt(text),
      }),
    })
    .map(({ key: { ts, origin }, workerId, fields, candidacy, agreed, keeps, floors }) => ({
      ts,
      origin,
      type: "catalog_upsert" as const,
      workerId,
      fields: { workerId, ...fields },
      candidacy: { ...candidacy },
      agreed,
      ...(keeps && { keeps: { ...keeps } }),
      floors: floors.map(({ start, end, key }) => ({ start, end, key: { ...key } })),
    }));
}
