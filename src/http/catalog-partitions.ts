/**
 * Where the selection API's catalog lives: its worker ids are service-wide, so a worker is found
 * by id through the serving replica's directory (`durable-objects/directory/catalog-map.ts`), and
 * a listing reads every partition the directory knows. Partitions outside the caller's token are
 * left out, as if absent: a worker there is "not found" for that caller, never a leak of its
 * existence through a 403.
 */
import type { Context } from "hono";
import type { CatalogRecord } from "../../durable-objects/core/catalog/catalog-record";
import type { TrackerRpc } from "../../durable-objects/rpc";
import type { TrackerKey } from "../../durable-objects/types";
import { mayAccess } from "../auth/auth";
import type { AppEnv } from "../env";
import { rowsOf } from "./listing";
import { directoryStub, trackerStub } from "./stubs";

/**
 * The tracker of `key`, for its catalog calls. Records hold read-only maps, which RPC clones like
 * any `Map` but whose type its stub types do not know (they would read as `never`): the contract's
 * own types are taken here instead.
 */
export function catalogStub(c: Context<AppEnv>, key: TrackerKey): Pick<TrackerRpc, CatalogMethod> {
  return trackerStub(c.env, key) as unknown as Pick<TrackerRpc, CatalogMethod>;
}

type CatalogMethod = "catalogUpsert" | "catalogPatch" | "catalogDelete" | "catalogList";

/** The partitions of `replica` whose catalog lists `workerId`, by (model, routing group) bytes. */
export async function partitionsOfWorker(
  c: Context<AppEnv>,
  replica: string,
  workerId: bigint,
): Promise<TrackerKey[]> {
  const listed = await directoryStub(c.env, replica).workerPartitions(workerId);
  return listed.map((partition) => ({ replica, ...partition }));
}

/** Only the partitions the caller's token covers (the routing group is the tenant of a grant). */
export function visibleTo(c: Context<AppEnv>, keys: readonly TrackerKey[]): TrackerKey[] {
  return keys.filter((key) => mayAccess(c, key.tenant));
}

/** The partitions a catalog listing covers: one when both names are given, else the directory's. */
export async function catalogPartitions(
  c: Context<AppEnv>,
  replica: string,
  filter: { model?: string; tenant?: string },
): Promise<TrackerKey[]> {
  const { model, tenant } = filter;
  if (model !== undefined && tenant !== undefined) return visibleTo(c, [{ replica, model, tenant }]);
  const directory = directoryStub(c.env, replica);
  const listed = await (model === undefined ? directory.listPartitions() : directory.listPartitions(model));
  const keys = listed
    .filter((partition) => tenant === undefined || partition.tenant === tenant)
    .map((partition) => ({ replica, ...partition }));
  return visibleTo(c, keys);
}

/** Every record of `keys`' catalogs, read in parallel (bounded). */
export async function catalogRecordsOf(
  c: Context<AppEnv>,
  keys: readonly TrackerKey[],
): Promise<CatalogRecord[]> {
  return rowsOf(keys, (key) => catalogStub(c, key).catalogList());
}
