/** A brute-force oracle for the prompt trie tests: what every live prompt of a rank adds up to. */

/** A prompt as the trie takes it: u64 hashes as little-endian u32 pairs. */
export const words = (...hashes: (number | bigint)[]) =>
  new Uint32Array(BigUint64Array.from(hashes.map((h) => BigInt.asUintN(64, BigInt(h)))).buffer);

/** Distinct hash values over `rank`'s prompts, and the longest prefix of `query` one of them starts with. */
export function expected(live: { prompt: bigint[]; rank: number }[], rank: number, query: bigint[]) {
  const values = new Set<bigint>();
  let depth = 0;
  for (const { prompt, rank: r } of live) {
    if (r !== rank) continue;
    for (const h of prompt) values.add(h);
    let i = 0;
    while (i < query.length && i < prompt.length && query[i] === prompt[i]) i++;
    depth = Math.max(depth, i);
  }
  return { blocks: values.size, depth };
}
