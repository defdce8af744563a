/**
 * What the grouped writers (`request-journal.ts`, `replication/sql-outbox.ts`,
 * `replication/sql-timeline.ts`) share: nesting of groups, and cutting a group's entries into rows
 * below the 2 MB that a SQLite row holds in a Durable Object.
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
