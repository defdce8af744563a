/**
 * `GET /metrics`: Prometheus text for the trackers of one replica that the caller's token may see,
 * read from the tracker objects themselves (isolate-global counters would count one isolate of many).
 * One scrape asks the replica's directory for its trackers and each tracker for its metrics, at most
 * `MAX_SCRAPE_TRACKERS` of them, `FAN_OUT_CONCURRENCY` at a time; `?model_name=` and `?tenant_id=`
 * narrow it, and `?replica=` (or the `x-slot-tracker-replica` header) picks the replica.
 */
import { Hono } from "hono";
import type { TrackerKey } from "../../durable-objects/types";
import type { AppEnv } from "../env";
import { FAN_OUT_CONCURRENCY, mapBounded } from "../http/fan-out";
import { chooseReplica, parseReplicas, replicaOf } from "../http/replica";
import { listingQuery } from "../schema/requests";
import { trackerStub } from "../http/stubs";
import { visibleTrackers } from "../http/visible-trackers";
import { CONTENT_TYPE, Exposition } from "../metrics/exposition";
import { renderTracker, type Scraped } from "../metrics/tracker-metrics";

/**
 * Trackers one scrape reads. With the directory call that is 257 subrequests, well inside a
 * Worker's per-request limit, and a few hundred milliseconds at 16 in flight.
 */
export const MAX_SCRAPE_TRACKERS = 256;

export const metrics = new Hono<AppEnv>();

metrics.get("/metrics", async (c) => {
  const filter = listingQuery.parse(c.req.query(), "");
  const named = c.req.query("replica");
  const replica =
    named === undefined ? replicaOf(c) : chooseReplica(parseReplicas(c.env.REPLICAS), named, undefined);
  const keys = await visibleTrackers(c, filter, replica);
  const shown = keys.slice(0, MAX_SCRAPE_TRACKERS);
  const failures: string[] = [];
  const scraped = await mapBounded(shown, async (key: TrackerKey): Promise<Scraped | null> => {
    try {
      return { key, metrics: await trackerStub(c.env, key).metrics() };
    } catch (error) {
      // One busy or restarting tracker must not cost the whole scrape; it is counted below.
      failures.push(String(error));
      return null;
    }
  });
  if (failures.length > 0) {
    console.error(
      JSON.stringify({
        level: "error",
        msg: "metrics: trackers failed",
        count: failures.length,
        first: failures[0],
      }),
    );
  }

  const out = new Exposition();
  out.comment(
    `slot_tracker: replica ${replica}: ${shown.length} of ${keys.length} trackers scraped ` +
      `(at most ${MAX_SCRAPE_TRACKERS} per scrape, ${FAN_OUT_CONCURRENCY} in flight; narrow with ?model_name= or ?tenant_id=)`,
  );
  const scrape = { replica };
  out.gauge("slot_tracker_scrape_trackers", "Trackers this scrape read.", scrape, shown.length);
  out.gauge(
    "slot_tracker_scrape_trackers_omitted",
    `Visible trackers left out because a scrape reads at most ${MAX_SCRAPE_TRACKERS}.`,
    scrape,
    keys.length - shown.length,
  );
  out.gauge(
    "slot_tracker_scrape_errors",
    "Trackers that failed to answer this scrape.",
    scrape,
    failures.length,
  );
  for (const entry of scraped) if (entry !== null) renderTracker(out, entry);
  return c.body(out.toString(), 200, { "content-type": CONTENT_TYPE });
});
