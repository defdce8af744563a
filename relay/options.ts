/**
 * The relay's command line. One relay serves one engine's data-parallel ranks: rank `i` of
 * `--dp-size` is published on the `--engine` and `--replay` ports plus `i` (vLLM and SGLang offset
 * both endpoints by the rank), and is posted as the tracker's `dp_rank` `--dp-rank` + `i`.
 */
import { parseArgs } from "node:util";
import { type CoreLimits, DEFAULT_LIMITS } from "./core";

export interface RelayOptions {
  ranks: { dpRank: number; engine: string; replay: string | null }[];
  tracker: string;
  model: string;
  tenant: string | null;
  workerId: bigint;
  token: string | null;
  batchMs: number;
  limits: CoreLimits;
  replayTimeoutMs: number;
  status: { host: string; port: number } | null;
  drainMs: number;
}

export const USAGE = `edge-kv-relay: engine KV events from ZMQ to the tracker's POST /kv_events

  --engine tcp://host:5557      the engine's KV-event publisher (rank 0 of this relay's ranks)
  --replay tcp://host:5558      its replay socket (optional: without it a gap starts a new epoch)
  --tracker https://…           the tracker's base URL
  --model NAME                  model_name
  --tenant NAME                 tenant_id (also --routing-group; default: the default tenant)
  --worker-id ID                the worker's id (a 64-bit integer)
  --dp-rank N                   the tracker's dp_rank of the first rank (default 0)
  --dp-size N                   ranks relayed, on consecutive ports (default 1)
  --token T                     a token granted for the tenant (or EDGE_KV_RELAY_TOKEN)
  --batch-ms MS                 the longest a batch waits to be posted (default 10)
  --batch-events N              post as soon as this many events wait (default 256)
  --max-buffered-events N       events kept while the tracker is unreachable (default 2000000)
  --replay-timeout-ms MS        how long a replay may go unanswered (default 2000)
  --status HOST:PORT            serve GET /status and /metrics there
  --drain-ms MS                 on SIGTERM, how long to keep posting what is held (default 5000)
`;

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): RelayOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      engine: { type: "string" },
      replay: { type: "string" },
      tracker: { type: "string" },
      model: { type: "string" },
      tenant: { type: "string" },
      "routing-group": { type: "string" },
      "worker-id": { type: "string" },
      "dp-rank": { type: "string" },
      "dp-size": { type: "string" },
      token: { type: "string" },
      "batch-ms": { type: "string" },
      "batch-events": { type: "string" },
      "max-buffered-events": { type: "string" },
      "replay-timeout-ms": { type: "string" },
      status: { type: "string" },
      "drain-ms": { type: "string" },
    },
  });
  const required = (name: "engine" | "tracker" | "model" | "worker-id") => {
    const value = values[name];
    if (value === undefined || value === "") throw new Error(`--${name} is required`);
    return value;
  };
  const engine = endpoint(required("engine"), "--engine");
  const replay = values.replay === undefined ? null : endpoint(values.replay, "--replay");
  const dpRank = integer(values["dp-rank"], "--dp-rank", 0, 0, 2 ** 31 - 1);
  const dpSize = integer(values["dp-size"], "--dp-size", 1, 1, 1024);
  if (values.tenant !== undefined && values["routing-group"] !== undefined) {
    throw new Error("--tenant and --routing-group name the same thing: give one");
  }
  const workerText = required("worker-id");
  if (!/^[0-9]{1,20}$/.test(workerText) || BigInt(workerText) >= 2n ** 64n) {
    throw new Error(`--worker-id: expected an integer from 0 to 2^64 − 1, got ${JSON.stringify(workerText)}`);
  }
  const tracker = required("tracker");
  if (!/^https?:\/\//.test(tracker))
    throw new Error(`--tracker: expected an http(s) URL, got ${JSON.stringify(tracker)}`);
  return {
    ranks: Array.from({ length: dpSize }, (_, i) => ({
      dpRank: dpRank + i,
      engine: offsetPort(engine, i),
      replay: replay === null ? null : offsetPort(replay, i),
    })),
    tracker,
    model: required("model"),
    tenant: values.tenant ?? values["routing-group"] ?? null,
    workerId: BigInt(workerText),
    token: values.token ?? env.EDGE_KV_RELAY_TOKEN ?? null,
    batchMs: integer(values["batch-ms"], "--batch-ms", 10, 0, 60_000),
    limits: {
      ...DEFAULT_LIMITS,
      callEvents: integer(
        values["batch-events"],
        "--batch-events",
        DEFAULT_LIMITS.callEvents,
        1,
        DEFAULT_LIMITS.maxCallEvents,
      ),
      maxBufferedEvents: integer(
        values["max-buffered-events"],
        "--max-buffered-events",
        DEFAULT_LIMITS.maxBufferedEvents,
        DEFAULT_LIMITS.maxCallEvents,
        1e9,
      ),
    },
    replayTimeoutMs: integer(values["replay-timeout-ms"], "--replay-timeout-ms", 2_000, 10, 600_000),
    status: values.status === undefined ? null : hostPort(values.status),
    drainMs: integer(values["drain-ms"], "--drain-ms", 5_000, 0, 600_000),
  };
}

function integer(raw: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max))
    throw new Error(`${name}: expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return value;
}

function endpoint(raw: string, name: string): string {
  if (!/^tcp:\/\/[^:/]+:[0-9]{1,5}$/.test(raw) && !/^(ipc|inproc):\/\/.+/.test(raw)) {
    throw new Error(`${name}: expected tcp://host:port (or ipc://, inproc://), got ${JSON.stringify(raw)}`);
  }
  return raw;
}

/** Rank `i`'s endpoint, as the engines derive it: tcp port + i; ipc and inproc get `_dp<i>`. */
export function offsetPort(endpoint: string, i: number): string {
  if (i === 0) return endpoint;
  const tcp = /^(tcp:\/\/[^:/]+:)([0-9]+)$/.exec(endpoint);
  if (tcp) return `${tcp[1]}${Number(tcp[2]) + i}`;
  return `${endpoint}_dp${i}`;
}

function hostPort(raw: string): { host: string; port: number } {
  const match = /^(.+):([0-9]{1,5})$/.exec(raw);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65_535) throw new Error(`--status: expected HOST:PORT, got ${JSON.stringify(raw)}`);
  return { host: match[1]!, port };
}
