/**
 * The request journal as a log (`request-journal.ts`), driven directly in a real object's SQLite
 * with tiny bounds so that cleaning runs often: after every step, `requests` with the journal
 * replayed over it (inside a transaction rolled back afterwards) must hold exactly the rows that
 * writing every change directly would have left, and a restart (replay, then a fresh journal) too.
 */
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RequestJournal, replayJournal, type Write } from "../../durable-objects/storage/request-journal";
import {
  COMPLETE_PREFILL,
  DELETE_REQUEST,
  MOVE_ANCHOR,
  REQUEST_COLUMN,
  type RequestValues,
  UPSERT_REQUEST,
} from "../../durable-objects/storage/request-rows";
import { TRACKER_SCHEMA } from "../../durable-objects/storage/tracker-schema";
import { trackerStub, uniqueKey } from "./helpers";

const IDS = ["a", "b"];

/** Bounds small enough that commits clean often. */
const BOUNDS = { maxRows: 3, maxBytes: 1500, keepBytes: 600 };

/** Thrown to roll back the transaction that replays the journal for a look. */
class RollBack extends Error {}

type Change =
  | { kind: "put"; id: string; tokens: number; blocks: number }
  | { kind: "prefill"; id: string; ts: number }
  | { kind: "anchor"; id: string; at: number }
  | { kind: "remove"; id: string };

type Step =
  | { group: Change[] }
  | { single: Change }
  | { clean: [maxRows: number, maxBytes: number, keepBytes: number] }
  | { fold: true }
  | { restart: true };

const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({
    kind: fc.constant("put" as const),
    id: fc.constantFrom(...IDS),
    tokens: fc.nat(100),
    blocks: fc.nat(3),
  }),
  fc.record({ kind: fc.constant("prefill" as const), id: fc.constantFrom(...IDS), ts: fc.nat(1000) }),
  fc.record({ kind: fc.constant("anchor" as const), id: fc.constantFrom(...IDS), at: fc.nat(1000) }),
  fc.record({ kind: fc.constant("remove" as const), id: fc.constantFrom(...IDS) }),
);

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ group: fc.array(change, { minLength: 1, maxLength: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ single: change }) },
  {
    weight: 3,
    arbitrary: fc.record({
      clean: fc.tuple(
        fc.constantFrom(0, 1, 2, 2 ** 30),
        fc.constantFrom(0, 400, 1500, 2 ** 30),
        fc.constantFrom(0, 600, 2 ** 30),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ fold: true as const }) },
  { weight: 1, arbitrary: fc.constant({ restart: true as const }) },
);

function rowOf(id: string, tokens: number, blocks: number, seq: number): RequestValues {
  const values: RequestValues = [
    id,
    seq,
    new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer,
    0,
    new BigUint64Array(blocks).fill(BigInt(seq)).buffer,
    tokens,
    seq,
    1,
    null,
    null,
    null,
    seq,
    "",
    seq + 1000,
    null,
    null,
    ...cacheColumns(tokens % 3, blocks, seq),
    // Owned (an owner and its grant) or not: an unowned put's journal entry leaves these off.
    ...(seq % 2 === 0 ? [`fe-${seq % 3}`, seq, seq + 500] : [null, null, null]),
  ];
  expect(values.length).toBe(Object.keys(REQUEST_COLUMN).length);
  return values;
}

/** The cache columns in each of their forms: absent, empty (record nothing), and with hashes. */
function cacheColumns(form: number, blocks: number, seq: number): SqlStorageValue[] {
  if (form === 0) return [null, null];
  if (form === 1) return [new ArrayBuffer(0), null];
  return [
    new BigUint64Array(blocks).fill(BigInt(seq + 1)).buffer,
    new BigUint64Array(blocks).fill(7n).buffer,
  ];
}

/** Rows as comparable values, BLOBs as byte arrays. */
function rowsOf(sql: SqlStorage): unknown[] {
  return sql
    .exec("SELECT * FROM requests ORDER BY request_id")
    .toArray()
    .map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([k, v]) => [k, v instanceof ArrayBuffer ? [...new Uint8Array(v)] : v]),
      ),
    );
}

/**
 * Runs `steps` against a fresh journal over `sql` and a model of direct writes, checking after each
 * step that `requests` with the journal replayed over it holds what the model does.
 */
function check(storage: DurableObjectStorage, steps: Step[]): void {
  const { sql } = storage;
  const write: Write = (query, ...bindings) => {
    sql.exec(query, ...bindings);
  };
  sql.exec("DELETE FROM requests");
  sql.exec("DELETE FROM journal");
  /** What direct writes would have left: each request's row. */
  const model = new Map<string, RequestValues>();
  let seq = 0;
  let journal = new RequestJournal(write, BOUNDS);
  const apply = (c: Change) => {
    const row = model.get(c.id);
    // The tracker changes only live requests and books only absent ids.
    if (c.kind === "put" ? row !== undefined : row === undefined) return;
    const direct = !journal.takes(c.id);
    if (c.kind === "put") {
      const values = rowOf(c.id, c.tokens, c.blocks, ++seq);
      model.set(c.id, [...values]);
      if (direct) write(UPSERT_REQUEST, ...values);
      else journal.put(values);
    } else if (c.kind === "prefill") {
      row![REQUEST_COLUMN.prefill_done] = 1;
      row![REQUEST_COLUMN.prefill_ts] = c.ts;
      row![REQUEST_COLUMN.prefill_origin] = "x";
      if (direct) write(COMPLETE_PREFILL, c.ts, "x", c.id);
      else journal.prefillCompleted(c.id, c.ts, "x");
    } else if (c.kind === "anchor") {
      row![REQUEST_COLUMN.anchor_at] = c.at;
      if (direct) write(MOVE_ANCHOR, c.at, c.id);
      else journal.anchorMoved(c.id, c.at);
    } else {
      model.delete(c.id);
      if (direct) write(DELETE_REQUEST, c.id);
      else journal.removed(c.id);
    }
  };
  const expected = () =>
    [...model.keys()].sort().map((id) => {
      const values = model.get(id)!;
      return Object.fromEntries(
        Object.entries(REQUEST_COLUMN).map(([name, i]) => {
          const v = values[i];
          return [name, v instanceof ArrayBuffer ? [...new Uint8Array(v)] : v];
        }),
      );
    });
  const journalRows = () => sql.exec("SELECT count(*) AS n FROM journal").one().n as number;
  for (const s of steps) {
    if ("group" in s) journal.group(() => s.group.forEach(apply));
    else if ("single" in s) apply(s.single);
    else if ("clean" in s) journal.clean(...s.clean);
    else if ("fold" in s) {
      journal.fold();
      expect(journalRows()).toBe(0);
    } else {
      replayJournal(sql, write);
      journal = new RequestJournal(write, BOUNDS);
    }
    // A commit cleans down to the bounds; what it carried is one row more.
    if ("group" in s || "single" in s) expect(journalRows()).toBeLessThanOrEqual(BOUNDS.maxRows + 1);
    let replayed: unknown[] = [];
    try {
      storage.transactionSync(() => {
        replayJournal(sql, write);
        replayed = rowsOf(sql);
        throw new RollBack();
      });
    } catch (error) {
      if (!(error instanceof RollBack)) throw error;
    }
    expect(replayed).toEqual(expected());
  }
}

/** Runs `fn` with the storage of a fresh tracker object whose schema is created. */
function inObject(fn: (storage: DurableObjectStorage) => void): Promise<void> {
  return runInDurableObject(trackerStub(uniqueKey("journal-log")), (_instance, state) => {
    state.storage.sql.exec(TRACKER_SCHEMA);
    fn(state.storage);
  });
}

describe("request journal as a log", () => {
  it("keeps `requests` plus the replayed journal equal to direct writes, through groups, cleanings, folds and restarts", async () => {
    await inObject((storage) => {
      fc.assert(
        fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => check(storage, steps)),
        { numRuns: 1500 },
      );
    });
  });

  it("writes a carried request to `requests` when the journal keeps no more, and deletes it there when freed later", async () => {
    const a = "a";
    await inObject((storage) =>
      check(storage, [
        { group: [{ kind: "put", id: a, tokens: 5, blocks: 2 }] },
        // Its row is cleaned while it is live: carried to a new row.
        { clean: [0, 0, 2 ** 30] },
        { group: [{ kind: "anchor", id: a, at: 5 }] },
        // Its carried row is cleaned, the anchor's row kept, with nothing to keep: it goes to `requests`.
        { clean: [1, 2 ** 30, 0] },
        { single: { kind: "anchor", id: a, at: 6 } },
        { group: [{ kind: "remove", id: a }] },
        { clean: [0, 0, 0] },
        { restart: true },
      ]),
    );
  });

  it("replays a put journaled before the cache columns existed, reading them as NULL", async () => {
    await inObject((storage) => {
      const { sql } = storage;
      const write: Write = (query, ...bindings) => {
        sql.exec(query, ...bindings);
      };
      const values = rowOf("old", 5, 2, 1);
      const entry: unknown[] = [0, ...values];
      entry[1 + REQUEST_COLUMN.worker_id] = "578437695752307201";
      entry[1 + REQUEST_COLUMN.hashes] = 2;
      const old = entry.slice(0, 1 + REQUEST_COLUMN.cache_block_hashes);
      sql.exec(
        "INSERT INTO journal (seq, entries, hashes) VALUES (1, ?, ?)",
        JSON.stringify([old]),
        values[4]!,
      );
      replayJournal(sql, write);
      const row = sql.exec("SELECT * FROM requests").one();
      expect(row.cache_block_hashes).toBeNull();
      expect(row.cache_sequence_hashes).toBeNull();
      expect([...new Uint8Array(row.hashes as ArrayBuffer)]).toEqual([
        ...new Uint8Array(values[4] as ArrayBuffer),
      ]);
    });
  });
});
