/**
 * The newest outbox entries, kept in memory as well as in SQLite, so that shipping them to peers
 * reads nothing back (profiled under a replication load: about a fifth of the sender's time per
 * batch went to reading the batch back). Entries are contiguous by sequence number; the oldest
 * leave past `capacity` entries or `maxBytes` bytes (KV-event entries run to tens of kilobytes)
 * or when trimmed, and a read that reaches before the first one kept answers null, for SQLite to serve.
 */
export class OutboxTail {
  private seqs: number[] = [];
  private entries: Uint8Array[] = [];
  private ats: number[] = [];
  /** Index of the first entry kept; the arrays are compacted once half of them is dropped. */
  private first = 0;
  /** Bytes of the entries kept. */
  private bytes = 0;

  constructor(
    private readonly capacity = 8_192,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  push(seq: number, entry: Uint8Array, at: number): void {
    const last = this.seqs.length > this.first ? this.seqs[this.seqs.length - 1]! : undefined;
    if (last !== undefined && seq !== last + 1) this.clear();
    this.seqs.push(seq);
    this.entries.push(entry);
    this.ats.push(at);
    this.bytes += entry.length;
    if (this.seqs.length - this.first > this.capacity) this.drop(1);
    let over = 0;
    for (let kept = this.bytes, i = this.first; kept > this.maxBytes && i < this.seqs.length - 1; i++) {
      kept -= this.entries[i]!.length;
      over++;
    }
    if (over > 0) this.drop(over);
  }

  /** Up to `max` entries after `afterSeq`, or null when the tail does not start early enough. */
  read(afterSeq: number, max: number): { seq: number; entry: Uint8Array }[] | null {
    const i = this.indexOf(afterSeq + 1);
    if (i === null) return null;
    const out: { seq: number; entry: Uint8Array }[] = [];
    for (let k = i; k < this.seqs.length && out.length < max; k++) {
      out.push({ seq: this.seqs[k]!, entry: this.entries[k]! });
    }
    return out;
  }

  /** When entry `seq` was appended; null when the tail does not hold it. */
  appendedAt(seq: number): number | null {
    const i = this.indexOf(seq);
    return i === null || i >= this.seqs.length ? null : this.ats[i]!;
  }

  /** Drops the entries up to `seq`. */
  trim(seq: number): void {
    const i = this.indexOf(seq + 1);
    if (i === null) return;
    this.drop(Math.min(i, this.seqs.length) - this.first);
  }

  clear(): void {
    this.seqs = [];
    this.entries = [];
    this.ats = [];
    this.first = 0;
    this.bytes = 0;
  }

  /** Index of `seq` (one past the last when `seq` comes next), or null when it is before the tail. */
  private indexOf(seq: number): number | null {
    if (this.seqs.length === this.first) return null;
    const offset = seq - this.seqs[this.first]!;
    if (offset < 0) return null;
    return Math.min(this.first + offset, this.seqs.length);
  }

  private drop(n: number): void {
    for (let i = this.first; i < this.first + n; i++) this.bytes -= this.entries[i]!.length;
    this.first += n;
    if (this.first * 2 >= this.seqs.length) {
      this.seqs = this.seqs.slice(this.first);
      this.entries = this.entries.slice(this.first);
      this.ats = this.ats.slice(this.first);
      this.first = 0;
    }
  }
}
