/**
 * Hook for the replication part of `npm run bench` (issue 5, part 3): two replicas, a `/batch` load
 * at one, events/s applied at the other and the p99 delay between acceptance and application.
 * Owned by the replication work; `bench/run.mjs` calls it after the other parts.
 *
 * Contract: `measureReplication({ root })` resolves to `null` while the part is not implemented, or to
 * `{ eventsPerSec, p99DelayMs, flushMs }` (events applied per second at the peer, p99 of acceptance →
 * application, and the `REPLICA_FLUSH_MS` in force), measured in the same run as everything else.
 * It must throw (failing the bench loudly) on any non-2xx answer or lost event.
 */
export async function measureReplication(_context) {
  return null;
}
