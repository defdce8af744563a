/**
 * The relay's own view, on `--status host:port`: `GET /status` (JSON, a record per rank) and
 * `GET /metrics` (Prometheus text). Lag is how long the oldest batch the tracker has not yet
 * acknowledged has waited; 0 means the tracker holds everything the relay has received.
 */
import { createServer, type Server } from "node:http";
import type { RankStatus } from "./rank";

const COUNTERS: [keyof RankStatus, string][] = [
  ["batches_received", "engine batches received live"],
  ["events_received", "engine events received live"],
  ["batches_applied", "batches the tracker applied"],
  ["calls", "POST /kv_events calls made"],
  ["call_retries", "calls retried after a network error or a retryable status"],
  ["replays", "replay requests to the engine"],
  ["replayed_batches", "batches the engine replayed"],
  ["gaps", "409 answers: the tracker was missing batches"],
  ["breaks", "epochs given up (each logged with its reason)"],
  ["malformed_messages", "engine messages that were not [topic, seq, payload]"],
];

const GAUGES: [keyof RankStatus, string][] = [
  ["lag_ms", "milliseconds the oldest unacknowledged batch has waited"],
  ["pending_batches", "batches not yet acknowledged"],
  ["pending_events", "events not yet acknowledged"],
  ["epochs", "epochs this relay started"],
];

export function metricsText(ranks: RankStatus[]): string {
  const lines: string[] = [];
  const family = (name: string, help: string, type: string, key: keyof RankStatus) => {
    lines.push(`# HELP edge_kv_relay_${name} ${help}`, `# TYPE edge_kv_relay_${name} ${type}`);
    for (const r of ranks) lines.push(`edge_kv_relay_${name}{dp_rank="${r.dp_rank}"} ${Number(r[key])}`);
  };
  for (const [key, help] of GAUGES) family(key, help, "gauge", key);
  for (const [key, help] of COUNTERS) family(`${key}_total`, help, "counter", key);
  return `${lines.join("\n")}\n`;
}

export function serveStatus(host: string, port: number, ranks: () => RankStatus[]): Promise<Server> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://relay").pathname;
    if (req.method === "GET" && path === "/status") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ranks: ranks() }));
    } else if (req.method === "GET" && path === "/metrics") {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(metricsText(ranks()));
    } else {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"GET /status or /metrics"}');
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
