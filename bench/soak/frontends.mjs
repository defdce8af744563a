/**
 * The soak's frontends with leases (SPEC §8): each holds a lease on one tracker at its home replica,
 * renews it every ttl/3 as the README's heartbeat does, and some of the load's bookings are made
 * under it (`owner`). One frontend dies mid-run: it stops renewing and sends nothing more, so its
 * lease lapses and every replica must free its bookings at the deadline, by the alarm alone. The
 * model drops them once every replica has stopped listing the lease.
 */

export class Frontends {
  /**
   * @param {{ load: import("./load.mjs").Load, tracker: any, frontends: { owner: string, home: string }[], ttlMs: number, random: () => number }} options
   */
  constructor({ load, tracker, frontends, ttlMs, random }) {
    this.load = load;
    this.tracker = tracker;
    this.ttlMs = ttlMs;
    this.random = random;
    /** @type {Map<string, { owner: string, home: string, alive: boolean, expiresAt: number, timer?: NodeJS.Timeout }>} */
    this.frontends = new Map(frontends.map((f) => [f.owner, { ...f, alive: true, expiresAt: 0 }]));
    this.stopped = false;
  }

  /** Creates every lease, then keeps renewing the live ones until `stop`. */
  async start() {
    for (const f of this.frontends.values()) {
      if (!(await this.renew(f))) throw new Error(`lease of ${f.owner} was not created`);
      this.schedule(f);
    }
  }

  schedule(f) {
    f.timer = setTimeout(async () => {
      if (this.stopped || !f.alive) return;
      await this.renew(f);
      this.schedule(f);
    }, this.ttlMs / 3);
  }

  async renew(f) {
    const { model } = this.tracker;
    const body = { model_name: model.model, tenant_id: model.tenant, owner: f.owner, ttl_ms: this.ttlMs };
    const answer = await this.load.call("lease", f.home, "POST", "/leases", body);
    if (answer.status !== 200) {
      this.load.unexpected("lease", answer.status, answer.value);
      return false;
    }
    f.expiresAt = Number(JSON.parse(answer.value).expires_at_ms);
    return true;
  }

  /** The owner a new booking of `t` is made under, with the replica it goes to; undefined: unowned. */
  pick(t) {
    if (t !== this.tracker || this.random() < 0.5) return undefined;
    const live = [...this.frontends.values()].filter((f) => f.alive);
    return live.length === 0 ? undefined : live[Math.floor(this.random() * live.length)];
  }

  /** Whether `owner`'s bookings are no longer the load's to end (its frontend died). */
  dead(owner) {
    return owner !== undefined && this.frontends.get(owner)?.alive === false;
  }

  /**
   * The frontend stops: no renewal, no call. From its lease's deadline on, every replica is asked
   * (past the load's counts) until none lists the lease, at most `timeoutMs` past the deadline.
   */
  kill(owner, replicas, timeoutMs) {
    const f = this.frontends.get(owner);
    f.alive = false;
    clearTimeout(f.timer);
    f.lapse = this.watch(f, replicas, timeoutMs);
  }

  async watch(f, replicas, timeoutMs) {
    const { model } = this.tracker;
    const q = `?model_name=${encodeURIComponent(model.model)}&tenant_id=${model.tenant}`;
    // A renewal in flight when the frontend died may still move the deadline.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (;;) {
      const wait = f.expiresAt - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      let listed = false;
      for (const r of replicas) {
        const res = await fetch(`${this.load.url}/leases${q}`, { headers: { "x-slot-tracker-replica": r } });
        const leases = res.ok ? await res.json() : null;
        if (!leases || leases.some((l) => l.owner === f.owner)) listed = true;
      }
      const late = Date.now() - f.expiresAt;
      if (!listed) return { owner: f.owner, gone: true, afterDeadlineMs: late };
      if (late > timeoutMs) return { owner: f.owner, gone: false, afterDeadlineMs: late };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * Waits for each dead frontend's watch and drops its bookings from the model once every replica
   * has let its lease go. @returns each watch's outcome.
   */
  async settle() {
    const results = [];
    for (const f of this.frontends.values()) {
      if (f.alive || !f.lapse) continue;
      const result = await f.lapse;
      if (result.gone) this.tracker.model.freeOwner(f.owner);
      results.push(result);
    }
    return results;
  }

  stop() {
    this.stopped = true;
    for (const f of this.frontends.values()) clearTimeout(f.timer);
  }
}
