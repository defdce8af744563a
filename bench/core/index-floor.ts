/**
 * The core's floor: how fast our cycle could be with an exact value index that costs nothing but the
 * one memory access no hashed index avoids. A tracker counts distinct blocks exactly, so every value
 * a new prompt segment brings has to be looked up among all live values: one read of a table line
 * chosen by the value's hash. This process replaces the `ValueIndex`'s work with exactly that read, a
 * table as large as the real one's at that size of book (at most three quarters full, grown by half,
 * as the real one is), and nothing else: no probing, no stores, and removal free. It is not a correct
 * tracker (the trace has no repeated values, so the cycle runs the same paths); it bounds from above
 * what any index that reads one line per added value can give on this machine.
 *
 * Run by `bench/run.mjs` as its own process (the patch is process-wide); argv[2] is the baseline
 * module's path. Prints one JSON line: per book size, cycles/s of the floor and of the baseline,
 * measured as the core benchmark measures them, and the floor's table size.
 */
import { pathToFileURL } from "node:url";
import type { BlockPool } from "../../durable-objects/core/prompt-index/block-pool";
import { homeIn, valueHash } from "../../durable-objects/core/prompt-index/ordered-slots";
import { ValueIndex } from "../../durable-objects/core/prompt-index/value-index";
import { cycleRates, naive, ours } from "./rates";
import { NaiveSubject, type NaiveTrackerClass, OurSubject } from "./subjects";
import { BOOK_SIZES, fill, T0 } from "./workload";

const MAX_LOAD = 0.75;
const SEED = 0x2545f491;

/** What the floor keeps per index: a table of real memory, its size and the values it stands for. */
class LineTable {
  table = new Int32Array(0);
  slots = 0;
  scale = 0;
  values = 0;
  /** Where the reads go, so that they are not optimised away. */
  sink = 0;

  constructor() {
    this.resize(1024);
  }

  /** A table of `slots` 8-byte slots, every page written (a page never written reads as shared zeros). */
  resize(slots: number): void {
    this.table = new Int32Array(slots * 2);
    for (let i = 0; i < this.table.length; i++) this.table[i] = Math.imul(i, 0x9e3779b1) | 1;
    this.slots = slots;
    this.scale = slots / 2 ** 32;
  }

  /** Reads the home line of each value of the run of `length` from `start`. */
  touch(pool: BlockPool, start: number, length: number): void {
    while (this.values + length > this.slots * MAX_LOAD) this.resize(Math.ceil(this.slots * 1.5));
    this.values += length;
    const { table, scale } = this;
    const words = pool.words;
    let sink = this.sink;
    let p = start;
    for (let k = 0; k < length; k++) {
      if (k > 0) p = pool.after(p);
      sink ^= table[2 * homeIn(valueHash(words[2 * p]!, words[2 * p + 1]!, SEED), scale)]!;
    }
    this.sink = sink;
  }
}

const tables = new WeakMap<ValueIndex, LineTable>();
/** The table of the index made last: the subject being measured. */
let latest: LineTable | undefined;
function tableOf(index: ValueIndex): LineTable {
  let t = tables.get(index);
  if (!t) {
    t = new LineTable();
    tables.set(index, t);
    latest = t;
  }
  return t;
}

ValueIndex.prototype.claimRun = function (this: ValueIndex, pool, start, length) {
  tableOf(this).touch(pool, start, length);
  return 0;
};
ValueIndex.prototype.removeRun = function (this: ValueIndex, _pool, _start, length) {
  tableOf(this).values -= length;
};
ValueIndex.prototype.relocateRun = () => {};

const naivePath = process.argv[2];
if (!naivePath) throw new Error("usage: index-floor.mjs <path of naive-tracker.mjs>");
const { NaiveTracker } = (await import(pathToFileURL(naivePath).href)) as { NaiveTracker: NaiveTrackerClass };

const sizes = [];
for (const live of BOOK_SIZES) {
  const a = new OurSubject(T0);
  fill(a, live, ours);
  const b = new NaiveSubject(NaiveTracker);
  fill(b, live, naive);
  const rates = cycleRates(a, b, live);
  if (a.tracker.liveRequests !== live) throw new Error(`book drifted: ${a.tracker.liveRequests} live`);
  sizes.push({
    live,
    floor: { cyclesPerSec: rates.ours, tableBytes: latest!.table.byteLength },
    baseline: { cyclesPerSec: rates.baseline },
  });
  process.stderr.write(`core floor: N=${live} done\n`);
}
process.stdout.write(`@@bench ${JSON.stringify({ sizes })}\n`);
