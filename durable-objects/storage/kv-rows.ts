/**
 * The engine-event index in SQLite (`core/kv-events/kv-state.ts` says when each write happens):
 *
 * - `kv_streams`: one row per (worker, rank) publisher, its epoch and next sequence number;
 * - `kv_journal`: one row per accepted call (more only for a call past {@link ROW_BLOCKS} blocks),
 *   its changes as `replication/kv-codec.ts` encodes them, in `seq` order;
 * - `kv_checkpoints`: what a rank held when its journal was folded, in parts of
 *   {@link ROW_BLOCKS} blocks, parents before children.
 *
 * Hydrating replays each rank's checkpoint, then the journal in call order, so the index comes back
 * as it was, eviction order included as far as the cap met the same changes in the same order.
 */
import type { KvChange, KvStoredChange, KvStream } from "../core/kv-events/kv-stream";
import type { KvState } from "../core/kv-events/kv-state";
import type { HybridClock } from "../core/replica/clock";
import { readChanges, writeChanges } from "../replication/kv-codec";
import { MsgpackReader } from "../replication/msgpack-reader";
import { MsgpackWriter } from "../replication/msgpack-writer";
import type { Write } from "./journal-entries";
import { blobToU64, workerIdBlob } from "./u64";

/** Blocks in one journal or checkpoint row at most: about 300 KB, far under a row's 2 MB. */
export const ROW_BLOCKS = 16_384;

interface StreamRow extends Record<string, SqlStorageValue> {
  worker_id: ArrayBuffer;
  dp_rank: number;
  epoch: string;
  epoch_ts: number;
  epoch_origin: string;
  next_seq: number;
}

interface ChangesRow extends Record<string, SqlStorageValue> {
  worker_id: ArrayBuffer;
  dp_rank: number;
  blocks: number;
  changes: ArrayBuffer;
}

const writer = new MsgpackWriter();

export class KvRows {
  private seq = 0;

  constructor(private readonly write: Write) {}

  streamSet(stream: KvStream): void {
    const { epoch } = stream;
    this.write(
      `INSERT OR REPLACE INTO kv_streams (worker_id, dp_rank, epoch, epoch_ts, epoch_origin, next_seq)
         VALUES (?, ?, ?, ?, ?, ?)`,
      workerIdBlob(stream.workerId),
      stream.dpRank,
      epoch.name,
      epoch.key.ts,
      epoch.key.origin,
      stream.nextSeq,
    );
  }

  streamCleared(workerId: bigint, dpRank: number): void {
    this.write("DELETE FROM kv_streams WHERE worker_id = ? AND dp_rank = ?", workerIdBlob(workerId), dpRank);
  }

  applied(workerId: bigint, dpRank: number, changes: readonly KvChange[]): void {
    for (const [part, blocks] of parts(changes)) {
      this.write(
        "INSERT INTO kv_journal (seq, worker_id, dp_rank, blocks, changes) VALUES (?, ?, ?, ?, ?)",
        ++this.seq,
        workerIdBlob(workerId),
        dpRank,
        blocks,
        encode(part),
      );
    }
  }

  checkpointed(workerId: bigint, dpRank: number, runs: readonly Omit<KvStoredChange, "kind">[]): void {
    this.rankCleared(workerId, dpRank);
    const changes: KvChange[] = runs.map((run) => ({ kind: "stored", ...run }));
    let n = 0;
    for (const [part, blocks] of parts(changes)) {
      this.write(
        "INSERT INTO kv_checkpoints (worker_id, dp_rank, part, blocks, changes) VALUES (?, ?, ?, ?, ?)",
        workerIdBlob(workerId),
        dpRank,
        n++,
        blocks,
        encode(part),
      );
    }
  }

  rankCleared(workerId: bigint, dpRank: number): void {
    const id = workerIdBlob(workerId);
    this.write("DELETE FROM kv_journal WHERE worker_id = ? AND dp_rank = ?", id, dpRank);
    this.write("DELETE FROM kv_checkpoints WHERE worker_id = ? AND dp_rank = ?", id, dpRank);
  }

  workerCleared(workerId: bigint): void {
    const id = workerIdBlob(workerId);
    this.write("DELETE FROM kv_journal WHERE worker_id = ?", id);
    this.write("DELETE FROM kv_checkpoints WHERE worker_id = ?", id);
    this.write("DELETE FROM kv_streams WHERE worker_id = ?", id);
  }

  /** Everything of the last tracker is gone (its tables were emptied or wiped). */
  forget(): void {
    this.seq = 0;
  }

  /** Rebuilds the streams and the index from the tables, without writing. */
  hydrate(sql: SqlStorage, kv: KvState, clock: HybridClock): void {
    const journaled = new Map<string, number>();
    const key = (row: { worker_id: ArrayBuffer; dp_rank: number }) =>
      `${blobToU64(row.worker_id)}:${row.dp_rank}`;
    for (const row of sql.exec<ChangesRow>(
      "SELECT * FROM kv_checkpoints ORDER BY worker_id, dp_rank, part",
    )) {
      kv.applyChanges(blobToU64(row.worker_id), row.dp_rank, decode(row.changes));
    }
    for (const row of sql.exec<ChangesRow & { seq: number }>("SELECT * FROM kv_journal ORDER BY seq")) {
      this.seq = row.seq;
      kv.applyChanges(blobToU64(row.worker_id), row.dp_rank, decode(row.changes));
      journaled.set(key(row), (journaled.get(key(row)) ?? 0) + row.blocks);
    }
    for (const row of sql.exec<StreamRow>("SELECT * FROM kv_streams")) {
      clock.observe(row.epoch_ts);
      const workerId = blobToU64(row.worker_id);
      const stream: KvStream = {
        workerId,
        dpRank: row.dp_rank,
        epoch: { name: row.epoch, key: { ts: row.epoch_ts, origin: row.epoch_origin } },
        nextSeq: row.next_seq,
      };
      kv.restoreStream(stream, journaled.get(key(row)) ?? 0);
    }
  }
}

/** A list of changes cut into runs of at most {@link ROW_BLOCKS} blocks (a change is never cut). */
function* parts(changes: readonly KvChange[]): Generator<[KvChange[], number]> {
  let part: KvChange[] = [];
  let blocks = 0;
  for (const change of changes) {
    const n = change.kind === "cleared" ? 1 : change.engineHashes.length;
    if (part.length > 0 && blocks + n > ROW_BLOCKS) {
      yield [part, blocks];
      part = [];
      blocks = 0;
    }
    part.push(change);
    blocks += n;
  }
  if (part.length > 0) yield [part, blocks];
}

function encode(changes: readonly KvChange[]): ArrayBuffer {
  const w = writer.reset();
  writeChanges(w, changes);
  return w.finish().buffer as ArrayBuffer;
}

function decode(blob: ArrayBuffer): KvChange[] {
  const r = new MsgpackReader(new Uint8Array(blob));
  const changes = readChanges(r);
  r.done();
  return changes;
}
