/**
 * `directory/`: the per-replica list of trackers that have workers, and where each catalog worker
 * id lives. The object (this file), its worker map (`catalog-map.ts`) and the tracker's side of
 * each: `directory-link.ts` reports a first worker gained or a last lost, `catalog-link.ts` the
 * worker ids a tracker's catalog lists.
 */
import { DurableObject } from "cloudflare:workers";
import type { DirectoryRpc } from "../rpc";
import { CatalogMap } from "./catalog-map";

interface TrackerRow extends Record<string, SqlStorageValue> {
  model: string;
  tenant: string;
}

/**
 * The trackers of one replica that have workers, for `GET /workers` and `GET /loads` without both
 * filters. Trackers report to it only when they gain their first worker or lose their last, so the
 * hot path never touches it; it is durable, so listings stay right after restarts.
 */
export class DirectoryObject extends DurableObject<object> implements DirectoryRpc {
  constructor(ctx: DurableObjectState, env: object) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS trackers (
      model TEXT NOT NULL,
      tenant TEXT NOT NULL,
      present INTEGER NOT NULL,
      version INTEGER NOT NULL,
      PRIMARY KEY (model, tenant)
    ) WITHOUT ROWID`);
    this.catalog = new CatalogMap(ctx.storage.sql);
  }

  private readonly catalog: CatalogMap;

  async setCatalog(model: string, tenant: string, workerIds: bigint[], version: number): Promise<void> {
    this.catalog.set(model, tenant, workerIds, version);
  }

  async workerPartitions(workerId: bigint): Promise<{ model: string; tenant: string }[]> {
    return this.catalog.partitionsOf(workerId);
  }

  async listPartitions(model?: string): Promise<{ model: string; tenant: string }[]> {
    return this.catalog.partitions(model);
  }

  async setTracker(model: string, tenant: string, present: boolean, version: number): Promise<void> {
    // Updates may arrive out of order (a retried old one after a newer one): the newest version wins.
    this.ctx.storage.sql.exec(
      `INSERT INTO trackers (model, tenant, present, version) VALUES (?, ?, ?, ?)
       ON CONFLICT (model, tenant) DO UPDATE SET present = excluded.present, version = excluded.version
       WHERE excluded.version > trackers.version`,
      model,
      tenant,
      present ? 1 : 0,
      version,
    );
  }

  async listTrackers(model?: string): Promise<{ model: string; tenant: string }[]> {
    // SQLite's default BINARY collation compares UTF-8 bytes: the order Dynamo's Rust strings sort in.
    const rows =
      model === undefined
        ? this.ctx.storage.sql.exec<TrackerRow>(
            "SELECT model, tenant FROM trackers WHERE present = 1 ORDER BY model, tenant",
          )
        : this.ctx.storage.sql.exec<TrackerRow>(
            "SELECT model, tenant FROM trackers WHERE present = 1 AND model = ? ORDER BY tenant",
            model,
          );
    return rows.toArray().map(({ model, tenant }) => ({ model, tenant }));
  }
}
