import { RoutingState } from "../core/routing/route-request";
import {
  type AffinityStore,
  type Hop,
  SessionAffinity,
  type SessionBinding,
} from "../core/routing/session-affinity";
import { type SessionBindingRow, TRACKER_SCHEMA } from "./tracker-schema";
import { blobToU64, u64ToBlob } from "./u64";

/**
 * Writes session affinity bindings through to the object's SQLite database, in the same
 * synchronous step as the `/route` that made them (so before its answer leaves). The table is part
 * of the tracker schema: it exists whenever the tracker does, and a route needs the tracker.
 */
export class SqlAffinityStore implements AffinityStore {
  private tableReady: boolean;

  constructor(private readonly sql: SqlStorage) {
    this.tableReady = hasTable(sql, "session_bindings");
  }

  /** Restores the bindings still fresh at `now`, least recently refreshed first. */
  load(affinity: SessionAffinity, now: number): void {
    if (!hasTable(this.sql, "session_bindings")) return;
    const rows = this.sql.exec<SessionBindingRow>(
      "SELECT * FROM session_bindings WHERE expires_at >= ? ORDER BY expires_at",
      now,
    );
    for (const row of rows) {
      affinity.restore({
        sessionId: row.session_id,
        hop: row.hop as Hop,
        workerId: blobToU64(row.worker_id),
        dpRank: row.dp_rank,
        expiresAt: row.expires_at,
        key: { ts: row.key_ts, origin: row.key_origin },
      });
    }
    this.sql.exec("DELETE FROM session_bindings WHERE expires_at < ?", now);
  }

  bound(binding: SessionBinding): void {
    // A binding replicated from a peer can arrive while this replica has no tracker tables yet.
    if (!this.tableReady) {
      this.sql.exec(TRACKER_SCHEMA);
      this.tableReady = true;
    }
    this.sql.exec(
      `INSERT OR REPLACE INTO session_bindings (session_id, hop, worker_id, dp_rank, expires_at, key_ts, key_origin)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      binding.sessionId,
      binding.hop,
      u64ToBlob(binding.workerId),
      binding.dpRank,
      binding.expiresAt,
      binding.key?.ts ?? 0,
      binding.key?.origin ?? "",
    );
  }

  unbound(sessionId: string, hop: Hop): void {
    this.sql.exec("DELETE FROM session_bindings WHERE session_id = ? AND hop = ?", sessionId, hop);
  }
}

function hasTable(sql: SqlStorage, name: string): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;
}

/** `/route`'s state for an object: bindings restored from `sql`, written back through it. */
export function openRouting(sql: SqlStorage, now: number): RoutingState {
  const store = new SqlAffinityStore(sql);
  const routing = new RoutingState(new SessionAffinity(store));
  store.load(routing.affinity, now);
  return routing;
}
