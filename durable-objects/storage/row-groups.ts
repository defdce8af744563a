/**
 * What the grouped writers (`request-journal.ts`, `replication/sql-outbox.ts`,
 * `replication/sql-timeline.ts`, `replication/sql-records.ts`) share: nesting of groups, cutting a
 * group's entries into rows below the 2 MB that a SQLite row holds in a Durable Object, and packing
 * entries into a row's BLOB.
 */

/** Bytes of one grouped row at most. */
export const ROW_BYTES = 1024 * 1024;

/** Open groups, nested calls counting once: `run` calls `end` when the outermost one returns or throws. */
export class GroupDepth {
  private depth = 0;

  get open(): boolean {
    return this.depth > 0;
  }

  run<T>(fn: () => T, end: () => void): T {
    this.depth++;
    try {
      return fn();
    } finally {
      if (--this.depth === 0) end();
    }
  }
}

/**
 * Cuts `entries` into runs `[from, to)` of at most {@link ROW_BYTES} (each entry stored behind a
 * 4-byte length; a run holds at least one entry), with each run's size in bytes.
 */
export function* rowRuns(entries: { entry: Uint8Array }[]): Generator<[number, number, number]> {
  for (let from = 0; from < entries.length; ) {
    let to = from;
    let size = 0;
    while (to < entries.length && (to === from || size + 4 + entries[to]!.entry.length <= ROW_BYTES)) {
      size += 4 + entries[to]!.entry.length;
      to++;
    }
    yield [from, to, size];
    from = to;
  }
}

/** Entries `from ..< to` of `events`, each behind its 4-byte length (`size` bytes in all). */
export function joinEntries(
  events: { entry: Uint8Array }[],
  from: number,
  to: number,
  size: number,
): ArrayBuffer {
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  let pos = 0;
  for (let i = from; i < to; i++) {
    const { entry } = events[i]!;
    view.setUint32(pos, entry.length);
    bytes.set(entry, pos + 4);
    pos += 4 + entry.length;
  }
  return bytes.buffer;
}

/** The `count` entries of a grouped row, each behind its 4-byte length. */
export function splitEntries(blob: ArrayBuffer, count: number): Uint8Array[] {
  const view = new DataView(blob);
  const entries: Uint8Array[] = [];
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const length = view.getUint32(pos);
    entries.push(new Uint8Array(blob, pos + 4, length));
    pos += 4 + length;
  }
  return entries;
}

/**
 * The bytes of a view as an ArrayBuffer of exactly their length (SQLite binds ArrayBuffers): its own
 * buffer when it covers it, else a copy.
 */
export function bytesOf(view: ArrayBufferView): ArrayBuffer {
  const { buffer, byteOffset, byteLength } = view;
  if (byteOffset === 0 && byteLength === buffer.byteLength && buffer instanceof ArrayBuffer) return buffer;
  return buffer.slice(byteOffset, byteOffset + byteLength) as ArrayBuffer;
}
