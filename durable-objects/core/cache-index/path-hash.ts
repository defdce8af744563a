/**
 * The event index's name for a node of the prompt tree: the public sequence hash of the prefix it
 * ends (reference selection §3.2, `public-xxh3-v1`): `path(0) = local(0)` and
 * `path(i) = xxh3_64(LE64(path(i − 1)) ‖ LE64(local(i)), 1337)`, computed from the events' local
 * hashes as they are stored.
 *
 * Why the public chain: it is what every query carries. A selection prompt's index hashes are the
 * public chain of its local hashes whatever its tracking hashes are (`selection-prompt.ts`), and a
 * `/route` or `/add` prompt is known by its sequence hashes alone, which Dynamo's frontends compute
 * this way; so the overlap walk looks each query block up by its sequence hash, with no hashing at
 * query time, and `/route` meets the engines' blocks as the selection API does. An engine's own
 * block hashes are its own and name nothing across engines. Two prefixes share a name only by a
 * 64-bit collision of XXH3.
 *
 * Values are word pairs (low word first) as the `Int32Array` views of `BigUint64Array`s give them;
 * results land in `lo` and `hi`, so the hot loop allocates nothing.
 */
import { XXH3_SEED } from "../hashing/block-seed";
import { HI_WORD, LO_WORD } from "../hashing/u64-halves";
import { seedHalves } from "../hashing/xxh3";
import { hash9to16Into } from "../hashing/xxh3-short";

const [SEED_HI, SEED_LO] = seedHalves(XXH3_SEED);

export class PathHasher {
  lo = 0;
  hi = 0;
  private readonly out = new Uint32Array(2);

  /** Sets (`lo`, `hi`) to the path of a root block with local hash (`localLo`, `localHi`): itself. */
  root(localLo: number, localHi: number): void {
    this.lo = localLo;
    this.hi = localHi;
  }

  /** Sets (`lo`, `hi`) to the path of the child with local hash (`localLo`, `localHi`) of `parent`. */
  child(parentLo: number, parentHi: number, localLo: number, localHi: number): void {
    const out = this.out;
    hash9to16Into(parentHi >>> 0, parentLo >>> 0, localHi >>> 0, localLo >>> 0, 16, SEED_HI, SEED_LO, out, 0);
    this.lo = out[LO_WORD]! | 0;
    this.hi = out[HI_WORD]! | 0;
  }
}
