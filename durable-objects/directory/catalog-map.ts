/**
 * The directory's worker map: which partitions (model, routing group) of this replica list each
 * worker id in their catalog, kept by the trackers themselves (`catalog-link.ts`), so the selection
 * API, whose worker ids are service-wide, finds a worker's partition from its id alone. A tracker
 * sends its whole list when it changes; the newest version per partition wins, so a late retry of
 * an older list changes nothing. Ids are 8-byte BLOBs (`storage/u64.ts`).
 */
import { blobToU64, u64ToBlob } from "../storage/u64";

interface PartitionRow extends Record<string, SqlStorageValue> {
  model: string;
  tenant: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS catalog_workers (
  model TEXT NOT NULL,
  tenant TEXT NOT NULL,
  worker_id BLOB NOT NULL,
  PRIMARY KEY (model, tenant, worker_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS catalog_workers_by_id ON catalog_workers (worker_id);
CREATE TABLE IF NOT EXISTS catalog_partitions (
  model TEXT NOT NULL,
  tenant TEXT NOT NULL,
  version INTEGER NOT NULL,
  workers INTEGER NOT NULL,
  PRIMARY KEY (model, tenant)
) WITHOUT ROWID;
`;

export class CatalogMap {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  /** Replaces the partition's ids by `workerIds` unless a newer version is already stored. */
  set(model: string, tenant: string, workerIds: readonly bigint[], version: number): void {
    const stored = this.sql
      .exec<{ version: number }>(
        "SELECT version FROM catalog_partitions WHERE model = ? AND tenant = ?",
        model,
        tenant,
      )
      .toArray()[0];
    if (stored !== undefined && stored.version >= version) return;
    // Only what changed is written: a partition registering its workers one by one would otherwise
    // rewrite its whole list each time.
    const ids = new Set(workerIds);
    const held = this.sql
      .exec<{ worker_id: ArrayBuffer }>(
        "SELECT worker_id FROM catalog_workers WHERE model = ? AND tenant = ?",
        model,
        tenant,
      )
      .toArray()
      .map((row) => blobToU64(row.worker_id));
    for (const id of held) {
      if (ids.delete(id)) continue;
      this.sql.exec(
        "DELETE FROM catalog_workers WHERE model = ? AND tenant = ? AND worker_id = ?",
        model,
        tenant,
        u64ToBlob(id),
      );
    }
    for (const id of ids) {
      this.sql.exec(
        "INSERT INTO catalog_workers (model, tenant, worker_id) VALUES (?, ?, ?)",
        model,
        tenant,
        u64ToBlob(id),
      );
    }
    this.sql.exec(
      "INSERT OR REPLACE INTO catalog_partitions (model, tenant, version, workers) VALUES (?, ?, ?, ?)",
      model,
      tenant,
      version,
      new Set(workerIds).size,
    );
  }

  /** The partitions listing `workerId`, by (model, tenant) bytes (SQLite's BINARY collation). */
  partitionsOf(workerId: bigint): { model: string; tenant: string }[] {
    return this.sql
      .exec<PartitionRow>(
        "SELECT model, tenant FROM catalog_workers WHERE worker_id = ? ORDER BY model, tenant",
        u64ToBlob(workerId),
      )
      .toArray()
      .map(({ model, tenant }) => ({ model, tenant }));
  }

  /**
   * Partitions whose catalog lists a worker, with the trackers that have slot-tracker workers
   * (listed by the catalog too, and known here even if their tracker never reported a list).
   */
  partitions(model?: string): { model: string; tenant: string }[] {
    const filter = model === undefined ? "" : "AND model = ?";
    const bindings = model === undefined ? [] : [model, model];
    return this.sql
      .exec<PartitionRow>(
        `SELECT model, tenant FROM catalog_partitions WHERE workers > 0 ${filter}
         UNION SELECT model, tenant FROM trackers WHERE present = 1 ${filter}
         ORDER BY model, tenant`,
        ...bindings,
      )
      .toArray()
      .map(({ model, tenant }) => ({ model, tenant }));
  }
}
