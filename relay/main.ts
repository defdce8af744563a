/**
 * `edge-kv-relay` (docs/relay.md): beside each engine, its KV events from ZMQ to the tracker's
 * `POST /kv_events`, one driver per data-parallel rank. SIGTERM and SIGINT stop it after posting
 * what it holds (`--drain-ms`); whatever it could not post the next run replays from the engine.
 */
import { EngineSockets } from "./engine";
import { jsonLog } from "./log";
import { parseOptions, USAGE } from "./options";
import { RankRelay } from "./rank";
import { serveStatus } from "./status";
import { TrackerClient } from "./tracker";

const BACKOFF_MS = { first: 100, cap: 10_000 };

async function main(): Promise<number> {
  const log = jsonLog();
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const tracker = new TrackerClient({
    url: options.tracker,
    model: options.model,
    tenant: options.tenant,
    workerId: options.workerId,
    token: options.token,
  });
  const ranks = options.ranks.map(
    (rank) =>
      new RankRelay(
        new EngineSockets(rank.engine, rank.replay, options.replayTimeoutMs),
        tracker,
        { dpRank: rank.dpRank, batchMs: options.batchMs, limits: options.limits, backoffMs: BACKOFF_MS },
        log,
      ),
  );
  const server = options.status
    ? await serveStatus(options.status.host, options.status.port, () =>
        ranks.map((r) => r.status(Date.now())),
      )
    : null;
  const stop = () => {
    for (const rank of ranks) rank.stop();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  log.info("relay started", {
    tracker: options.tracker,
    model: options.model,
    worker_id: options.workerId.toString(),
    ranks: options.ranks,
    ...(server && { status: server.address() }),
  });
  const results = await Promise.allSettled(ranks.map((rank) => rank.run(options.drainMs)));
  server?.close();
  for (const result of results) {
    if (result.status === "rejected") log.error("rank stopped", { error: String(result.reason) });
  }
  const failed = results.some((r) => r.status === "rejected") || ranks.some((r) => r.failed);
  log.info("relay stopped", { pending: ranks.map((r) => r.status(Date.now()).pending_batches) });
  return failed ? 1 : 0;
}

process.exitCode = await main();
