/**
 * `GET /selection/dump` (admin): every partition's cache index in the serving replica, as Dynamo's
 * recovery form, `{"<model>:<routing_group>": {"block_size", "events": [RouterEvent]}}`, so a Dynamo
 * selector or indexer started with this service as its `--indexer-peers` recovers from it.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { mapBounded } from "../../http/fan-out";
import { replicaOf } from "../../http/replica";
import { trackerStub } from "../../http/stubs";
import { visibleTrackers } from "../../http/visible-trackers";
import { partitionDumpToWire } from "../../schema/selection/booking-wire";
import { send } from "../../wire/respond";

export const dump = new Hono<AppEnv>().get("/dump", async (c) => {
  const replica = replicaOf(c);
  const keys = await visibleTrackers(c, { model_name: undefined, tenant_id: undefined }, replica);
  const dumps = await mapBounded(keys, (key) => trackerStub(c.env, key).cacheDump());
  // No prototype: a partition named `__proto__` stays an ordinary key.
  const answer: Record<string, ReturnType<typeof partitionDumpToWire>> = Object.create(null);
  for (const [i, key] of keys.entries()) {
    const one = dumps[i];
    if (one) answer[`${key.model}:${key.tenant}`] = partitionDumpToWire(one.blockSize, one.events);
  }
  return send(c, answer, 200);
});
