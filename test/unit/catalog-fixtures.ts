/** Records for the catalog's tests: built through the core, failing loudly if a build is refused. */
import { type BuildContext, buildRecord, patchRecord } from "../../durable-objects/core/catalog/build-record";
import {
  CATALOG_CONFIG,
  type CatalogRecord,
  type PartitionFix,
  type WorkerPatch,
  type WorkerUpsert,
} from "../../durable-objects/core/catalog/catalog-record";

export const OPEN: BuildContext = { config: CATALOG_CONFIG, fix: undefined };
/** Above 2^63, as Dynamo's instance ids often are. */
export const BIG_ID = 18446744073709551557n;
export const COMPLETE: WorkerUpsert = { workerId: 7n, endpoint: "http://w7:8000", blockSize: 16 };

export function built(
  input: WorkerUpsert,
  context: BuildContext = OPEN,
): { record: CatalogRecord; fix: PartitionFix | undefined } {
  const result = buildRecord(input, context);
  if (!result.ok) throw new Error(result.message);
  return result;
}

export function patched(previous: CatalogRecord, patch: WorkerPatch, fix?: PartitionFix): CatalogRecord {
  const result = patchRecord(previous, patch, { config: CATALOG_CONFIG, fix });
  if (!result.ok) throw new Error(result.message);
  return result.record;
}
