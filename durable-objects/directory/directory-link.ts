/**
 * Tells this replica's directory that a tracker gained its first worker or lost its last. Off the
 * hot path (only those two events). A failure is remembered in storage and retried from the alarm;
 * a newer version always wins at the directory, so a late retry cannot undo a newer fact.
 */
import type { DirectoryObject } from "./directory-object";

/** How long to wait before retrying a directory update that failed, ms. */
const DIRECTORY_RETRY_MS = 2_000;

export class DirectoryLink {
  /** An update still owed (`present` flag), retried from the alarm until it lands. */
  owed: boolean | null = null;
  /** Version of the newest update sent; versions only grow. */
  private version = 0;
  /** Version of the failed update behind `owed`. */
  private owedVersion = 0;

  constructor(
    private readonly directory: () => DurableObjectStub<DirectoryObject>,
    private readonly model: string,
    private readonly tenant: string,
    /** Persists the owed update (null: none), so that a restart retries it. */
    private readonly persist: (present: boolean | null) => void,
  ) {}

  /** When the owed update is to be retried (null: none is owed). */
  retryAt(now: number): number | null {
    return this.owed === null ? null : now + DIRECTORY_RETRY_MS;
  }

  async update(present: boolean): Promise<void> {
    this.version = Math.max(Date.now(), this.version + 1);
    const version = this.version;
    try {
      await this.directory().setTracker(this.model, this.tenant, present, version);
      if (this.owed !== null && this.owedVersion <= version) {
        this.owed = null;
        this.persist(null);
      }
    } catch (error) {
      console.error(JSON.stringify({ level: "error", msg: "directory update failed", error: String(error) }));
      if (version >= this.owedVersion) {
        this.owed = present;
        this.owedVersion = version;
        this.persist(present);
      }
    }
  }
}
