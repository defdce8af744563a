import { DurableObject } from "cloudflare:workers";
import { type RoutingState, routeRequest, routingStatsOf } from "./core/route-request";
import { seededRng, systemRng } from "./core/rng";
import { Tracker } from "./core/tracker";
import type { DirectoryObject } from "./directory-object";
import { DEFAULT_REQUEST_EXPIRY_SECONDS } from "./limits";
import { directoryName, parseTrackerName } from "./naming";
import { openRouting } from "./sql-affinity-store";
import { SqlTrackerStore } from "./sql-tracker-store";
import type {
  AddInput,
  PotentialLoad,
  RankLoad,
  RegisterInput,
  Result,
  RouteInput,
  RouteOutcome,
  RoutingStats,
  TrackerKey,
  TrackerRpc,
  WorkerInfo,
} from "./types";

export interface TrackerEnv {
  REQUEST_EXPIRY_SECONDS?: string;
  DIRECTORY: DurableObjectNamespace<DirectoryObject>;
}

/** How long to wait before retrying a directory update that failed, ms. */
const DIRECTORY_RETRY_MS = 2_000;

/**
 * One slot tracker: a (model, tenant) in one replica, named by `trackerName`. A thin shell around
 * the pure {@link Tracker}: it hydrates memory from SQLite once, in the constructor, serves reads
 * from memory, writes every change through before answering, and keeps one alarm at the earliest
 * due time (next expiry, or a pending directory update).
 */
export class TrackerObject extends DurableObject<TrackerEnv> implements TrackerRpc {
  private readonly key: TrackerKey;
  private readonly store: SqlTrackerStore;
  private readonly tracker: Tracker;
  /** `/route`'s session bindings (durable), round-robin turns and conflict counts. */
  private readonly routing: RoutingState;
  /** The alarm time currently set, epoch ms (null: none). */
  private armedAt: number | null = null;
  /** A directory update still owed (`present` flag), retried from the alarm until it lands. */
  private directoryOwed: boolean | null = null;
  /** Version of the newest directory update sent; versions only grow. */
  private directoryVersion = 0;
  /** Version of the failed update behind `directoryOwed`. */
  private owedVersion = 0;

  constructor(ctx: DurableObjectState, env: TrackerEnv) {
    super(ctx, env);
    this.key = parseTrackerName(ctx.id.name) ?? { replica: "", model: "", tenant: "" };
    this.store = new SqlTrackerStore(ctx.storage.sql);
    this.tracker = new Tracker({
      model: this.key.model,
      tenant: this.key.tenant,
      expiryMs: expirySecondsOf(env) * 1000,
      store: this.store,
    });
    this.routing = openRouting(ctx.storage.sql, Date.now());
    void ctx.blockConcurrencyWhile(async () => {
      this.store.hydrate(this.tracker);
      this.directoryOwed = this.store.directoryOwed();
      this.armedAt = await ctx.storage.getAlarm();
      // A restart may find expiry already due, or an alarm lost in a reset: re-arm from storage.
      await this.afterChange();
    });
  }

  async register(input: RegisterInput): Promise<Result> {
    const result = this.tracker.register(input, Date.now());
    if (result.ok && result.created) await this.updateDirectory(true);
    return this.finish(result);
  }

  async unregister(workerId: bigint): Promise<Result> {
    const result = this.tracker.unregister(workerId, Date.now());
    if (result.ok && result.deleted) {
      // The last worker left: the tracker and everything it stored are gone, alarm included.
      await this.ctx.storage.deleteAll();
      await this.ctx.storage.deleteAlarm();
      this.store.forgetSchema();
      this.routing.affinity.clear();
      this.armedAt = null;
      await this.updateDirectory(false);
    }
    return this.finish(result);
  }

  async listWorkers(): Promise<WorkerInfo[]> {
    return this.finish(this.tracker.listWorkers(Date.now()));
  }

  async add(input: AddInput): Promise<Result> {
    return this.finish(this.tracker.add(input, Date.now()));
  }

  async prefillComplete(requestId: string): Promise<Result> {
    return this.finish(this.tracker.prefillComplete(requestId, Date.now()));
  }

  async free(requestId: string): Promise<Result> {
    return this.finish(this.tracker.free(requestId, Date.now()));
  }

  async listLoads(): Promise<RankLoad[]> {
    return this.finish(this.tracker.listLoads(Date.now()));
  }

  async potentialLoads(hashes: BigUint64Array, newIslTokens: number): Promise<Result<{ loads: PotentialLoad[] }>> {
    return this.finish(this.tracker.potentialLoads(hashes, newIslTokens, Date.now()));
  }

  /** Chooses and books in one synchronous step: no other call can read the loads in between. */
  async route(input: RouteInput): Promise<Result<RouteOutcome>> {
    const rng = input.seed === undefined ? systemRng : seededRng(input.seed);
    return this.finish(routeRequest(this.tracker, this.routing, input, Date.now(), rng));
  }

  async routingStats(): Promise<RoutingStats> {
    return this.finish(routingStatsOf(this.tracker, this.routing, Date.now()));
  }

  /** Rows SQLite reports written by this instance (write-cost figure for benchmarks and metrics). */
  async rowsWritten(): Promise<number> {
    return this.store.rowsWritten;
  }

  /** Runs everything due; safe to run twice (at-least-once delivery): it only acts on what is due now. */
  override async alarm(): Promise<void> {
    this.armedAt = null;
    this.tracker.expire(Date.now());
    if (this.directoryOwed !== null) await this.updateDirectory(this.directoryOwed);
    await this.afterChange();
  }

  private async finish<T>(value: T): Promise<T> {
    await this.afterChange();
    return value;
  }

  /** Points the alarm at the earliest due time; it is only ever moved earlier or re-set after firing. */
  private async afterChange(): Promise<void> {
    const deadline = this.tracker.nextDeadline();
    // Expiry is strict (`now > deadline`), so fire 1 ms after the deadline.
    let due = deadline === undefined ? null : deadline + 1;
    if (this.directoryOwed !== null) {
      const retryAt = Date.now() + DIRECTORY_RETRY_MS;
      due = due === null ? retryAt : Math.min(due, retryAt);
    }
    if (due === null || (this.armedAt !== null && this.armedAt <= due)) return;
    this.armedAt = due;
    await this.ctx.storage.setAlarm(due);
  }

  /**
   * Tells this replica's directory that the tracker gained its first worker or lost its last.
   * Off the hot path (only those two events). A failure is remembered in storage and retried from
   * the alarm; a newer version always wins at the directory, so a late retry cannot undo a newer fact.
   */
  private async updateDirectory(present: boolean): Promise<void> {
    this.directoryVersion = Math.max(Date.now(), this.directoryVersion + 1);
    const version = this.directoryVersion;
    try {
      const directory = this.env.DIRECTORY.getByName(directoryName(this.key.replica));
      await directory.setTracker(this.key.model, this.key.tenant, present, version);
      if (this.directoryOwed !== null && this.owedVersion <= version) {
        this.directoryOwed = null;
        this.store.setDirectoryOwed(null);
      }
    } catch (error) {
      console.error(JSON.stringify({ level: "error", msg: "directory update failed", error: String(error) }));
      if (version >= this.owedVersion) {
        this.directoryOwed = present;
        this.owedVersion = version;
        this.store.setDirectoryOwed(present);
      }
    }
  }
}

/** `REQUEST_EXPIRY_SECONDS`; like Dynamo, an invalid or zero value falls back to the default. */
function expirySecondsOf(env: TrackerEnv): number {
  const seconds = Number(env.REQUEST_EXPIRY_SECONDS);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_REQUEST_EXPIRY_SECONDS;
}
