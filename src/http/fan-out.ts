/**
 * Bounded-concurrency map. Unfiltered listings call every tracker of a replica; unbounded fan-out
 * would open one subrequest per tracker at once and hit the Worker's simultaneous-connection cap.
 */
export const FAN_OUT_CONCURRENCY = 16;

/** `fn` over `items`, at most `limit` in flight, results in input order; the first failure rejects. */
export async function mapBounded<T, R>(
  items: readonly T[],
  fn: (item: T) => Promise<R>,
  limit = FAN_OUT_CONCURRENCY,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
