/**
 * The event index's name for a node of the prompt tree: a 64-bit hash of the path of public local
 * block hashes from the root to it, `path(i) = E(path(i − 1) ⊕ local(i))` with `path(−1) = 0` and
 * `E` a keyed permutation of 64-bit values (a four-round Feistel network over murmur3's 32-bit
 * finaliser, round keys from the index's seed).
 *
 * Why not the query's sequence hashes: they may be keyed (`keyed-xxh3-v1`), and an engine's own
 * block hashes are its own, so the index chains the public local hashes itself (as Dynamo's radix
 * tree walks them from the root). Why a permutation: a node's local hash is recovered from its path
 * and its parent's (`local = E⁻¹(path) ⊕ parentPath`), so an entry stores the path and not the
 * local hash as well: 8 bytes an entry of a budget of 64. Two paths share a name only by a 64-bit
 * collision of a keyed function, which a client choosing tokens cannot aim at without the key.
 *
 * Values are word pairs (low word first) as the `Int32Array` views of `BigUint64Array`s give them;
 * results land in `lo` and `hi`, so the hot loop allocates nothing.
 */
import { finish, mix } from "./id-table";

const ROUNDS = 4;

export class PathHasher {
  lo = 0;
  hi = 0;
  private readonly keys = new Int32Array(ROUNDS);

  constructor(seed: number) {
    for (let k = 0; k < ROUNDS; k++) this.keys[k] = finish(mix(seed, 0x2545f491 + k));
  }

  /** Sets (`lo`, `hi`) to the path of the child with local hash (`localLo`, `localHi`) of `parent`. */
  child(parentLo: number, parentHi: number, localLo: number, localHi: number): void {
    const keys = this.keys;
    let l = parentHi ^ localHi;
    let r = parentLo ^ localLo;
    for (let k = 0; k < ROUNDS; k++) {
      const t = l ^ finish(r ^ keys[k]!);
      l = r;
      r = t;
    }
    this.hi = l;
    this.lo = r;
  }

  /** Sets (`lo`, `hi`) to the local hash of the node at `path` whose parent is at `parent`. */
  local(pathLo: number, pathHi: number, parentLo: number, parentHi: number): void {
    const keys = this.keys;
    let l = pathHi;
    let r = pathLo;
    for (let k = ROUNDS - 1; k >= 0; k--) {
      const t = r;
      r = l;
      l = t ^ finish(r ^ keys[k]!);
    }
    this.hi = l ^ parentHi;
    this.lo = r ^ parentLo;
  }
}
