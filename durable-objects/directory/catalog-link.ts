/**
 * Tells this replica's directory which worker ids the tracker's catalog lists, whenever that list
 * changes: by a catalog write, a `/register` or `/unregister`, or a change merged from a peer (so
 * every replica's directory agrees with its own trackers). The whole list goes each time (at most
 * `MAX_WORKERS` ids, and only on roster changes); a failure is remembered in storage and the list
 * as it is then is sent again from the alarm. A newer version always wins at the directory.
 */
import type { TrackerState } from "../core/tracker-state";
import type { DirectoryObject } from "./directory-object";

/** How long to wait before retrying a catalog report that failed, ms. */
const CATALOG_RETRY_MS = 2_000;

export class CatalogLink {
  /** A report failed and is owed; retried from the alarm until one lands. */
  owed = false;
  /** Version of the newest report sent; versions only grow. */
  private version = 0;
  /** The list the directory has (as its sorted decimal ids), or null when unknown. */
  private reported: string | null = null;
  /** The tracker's `rosterVersion` last looked at: until it moves, the list cannot have changed. */
  private rosterSeen = -1;

  constructor(
    private readonly directory: () => DurableObjectStub<DirectoryObject>,
    private readonly model: string,
    private readonly tenant: string,
    /** Persists whether a report is owed, so that a restart retries it. */
    private readonly persist: (owed: boolean) => void,
  ) {}

  /** What the directory holds after a restart: the tracker's list as stored, unless a report was owed. */
  restore(tracker: TrackerState, owed: boolean): void {
    this.owed = owed;
    this.reported = owed ? null : signature(listedIds(tracker));
    this.rosterSeen = tracker.rosterVersion;
  }

  /** Brings the directory up to the tracker's list, if its roster moved (or a report is owed). */
  async update(tracker: TrackerState): Promise<void> {
    if (tracker.rosterVersion === this.rosterSeen && !this.owed) return;
    this.rosterSeen = tracker.rosterVersion;
    await this.report(listedIds(tracker));
  }

  /** When the owed report is to be retried (null: none is owed). */
  retryAt(now: number): number | null {
    return this.owed ? now + CATALOG_RETRY_MS : null;
  }

  /** Sends `workerIds` if they differ from what the directory has (or a report is owed). */
  async report(workerIds: readonly bigint[]): Promise<void> {
    const listed = signature(workerIds);
    if (!this.owed && listed === this.reported) return;
    this.version = Math.max(Date.now(), this.version + 1);
    const version = this.version;
    try {
      await this.directory().setCatalog(this.model, this.tenant, [...workerIds], version);
      // A report started meanwhile is newer: what the directory holds is that one's (or still owed).
      if (version !== this.version) return;
      this.reported = listed;
      if (this.owed) {
        this.owed = false;
        this.persist(false);
      }
    } catch (error) {
      console.error(JSON.stringify({ level: "error", msg: "catalog report failed", error: String(error) }));
      this.reported = null;
      if (!this.owed) {
        this.owed = true;
        this.persist(true);
      }
    }
  }
}

function signature(workerIds: readonly bigint[]): string {
  return [...workerIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(",");
}

/** The worker ids the tracker's catalog lists: its records, and its registrations without one. */
function listedIds(tracker: TrackerState): bigint[] {
  const ids = new Set(tracker.catalog.entries.keys());
  for (const workerId of tracker.book.workers.keys()) ids.add(workerId);
  return [...ids];
}
