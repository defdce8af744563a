/**
 * The soak's load: client loops that send a sustained mix of register/unregister (a churn tracker),
 * add, route, batch, prefill_complete, free and reads, spread over the three replicas, and record in
 * the model only what was acknowledged. Every request of one id goes to one replica (its frontend's
 * nearest), as a Dynamo frontend would; different ids go everywhere. With `frontends`
 * (`frontends.mjs`), some bookings are made under a frontend's lease, at its replica; the bookings of
 * a frontend that died are left to its lease's lapse.
 */
import { decode, encode } from "@msgpack/msgpack";

const U64 = 2n ** 64n;
const MSGPACK = "application/msgpack";

/** JSON text with bigints as exact integer literals (`JSON.rawJSON` is not in Node 20). */
function toJson(value) {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `\u0000${v}\u0000` : v)).replace(
    /"\\u0000(-?\d+)\\u0000"/g,
    "$1",
  );
}

export class Load {
  /**
   * @param {{ url: string, replicas: string[], trackers: any[], churnTracker: any, liveTarget: number, maxAgeMs: number, random: () => number, frontends?: import("./frontends.mjs").Frontends }} options
   */
  constructor(options) {
    Object.assign(this, options);
    this.resetStats();
    this.busy = new Set();
    this.counter = 0;
  }

  resetStats() {
    this.stats = { ops: 0, byKind: {}, statuses: {}, serverErrors: 0, transportErrors: 0, unexpected: 0 };
    this.samples = [];
  }

  note(kind, status) {
    this.stats.ops++;
    this.stats.byKind[kind] = (this.stats.byKind[kind] ?? 0) + 1;
    this.stats.statuses[status] = (this.stats.statuses[status] ?? 0) + 1;
    if (status >= 500) this.stats.serverErrors++;
    if (status === 0) this.stats.transportErrors++;
  }

  unexpected(what, status, text) {
    this.stats.unexpected++;
    if (this.samples.length < 10)
      this.samples.push(`${new Date().toISOString()} ${what} → ${status} ${String(text).slice(0, 200)}`);
  }

  /** One request; MessagePack or JSON body, MessagePack answer when `binary`. */
  async call(kind, replica, method, path, body, { msgpack = false, binary = false } = {}) {
    const headers = { "x-slot-tracker-replica": replica };
    if (body !== undefined) headers["content-type"] = msgpack ? MSGPACK : "application/json";
    if (binary) headers.accept = MSGPACK;
    try {
      const res = await fetch(`${this.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : msgpack ? encode(body, { useBigInt64: true }) : toJson(body),
        signal: AbortSignal.timeout(30_000),
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
      this.note(kind, res.status);
      const value =
        binary && bytes.length > 0 ? decode(bytes, { useBigInt64: true }) : new TextDecoder().decode(bytes);
      return { status: res.status, value };
    } catch (error) {
      this.note(kind, 0);
      // undici's "fetch failed" says nothing; its cause (e.g. "other side closed") names the fault.
      return { status: 0, value: error?.cause ? `${error} (${error.cause})` : String(error) };
    }
  }

  pick(xs) {
    return xs[Math.floor(this.random() * xs.length)];
  }

  /** A prompt: one of the tracker's shared prefixes and a tail of its own. */
  prompt(t) {
    const tail = Array.from(
      { length: 4 + Math.floor(this.random() * 36) },
      (_, i) => (BigInt(++this.counter) * 0x9e3779b97f4a7c15n + BigInt(i)) % U64,
    );
    return [...this.pick(t.prefixes), ...tail];
  }

  /** Hashes as sent: those past i64 sometimes written signed (-1 ≡ 2^64 − 1). */
  wire(hashes) {
    return this.random() < 0.5 ? hashes : hashes.map((h) => (h >= 2n ** 63n ? h - U64 : h));
  }

  /**
   * Client loops until `shouldStop()`, together offering `rate` requests/s (0: as fast as answered).
   * A memory check needs a constant offered load: the state replication keeps per request id scales
   * with the request rate, so a rate that drifts with the machine's other work moves the heap too.
   */
  async run(shouldStop, rate = 0) {
    this.paced ??= { started: Date.now(), issued: 0 };
    while (!shouldStop()) {
      if (rate > 0) {
        const due = this.paced.started + (this.paced.issued++ * 1000) / rate;
        if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      }
      const roll = this.random();
      if (roll < 0.01) await this.churn();
      else if (roll < 0.08) await this.read();
      else await this.lifecycle(this.pick(this.trackers));
    }
  }

  async read() {
    const t = this.pick(this.trackers);
    const replica = this.pick(this.replicas);
    const query = `?model_name=${encodeURIComponent(t.model.model)}&tenant_id=${t.model.tenant}`;
    const roll = this.random();
    const [kind, answer] =
      roll < 0.5
        ? [
            "potential_loads",
            await this.call("potential_loads", replica, "POST", "/potential_loads", {
              model_name: t.model.model,
              tenant_id: t.model.tenant,
              sequence_hashes: this.wire(this.prompt(t)),
              new_isl_tokens: 100,
            }),
          ]
        : roll < 0.8
          ? ["loads", await this.call("loads", replica, "GET", `/loads${query}`)]
          : ["workers", await this.call("workers", replica, "GET", `/workers${query}`)];
    if (answer.status !== 200) this.unexpected(kind, answer.status, answer.value);
  }

  /** Registers or unregisters one of the churn tracker's workers, always at that worker's replica. */
  async churn() {
    const w = this.pick(this.churnTracker.workers);
    if (this.busy.has(w.key)) return;
    this.busy.add(w.key);
    const { model } = this.churnTracker;
    const base = { worker_id: w.id, model_name: model.model, tenant_id: model.tenant };
    if (model.workers.has(w.id)) {
      const answer = await this.call("unregister", w.home, "POST", "/unregister", base);
      if (answer.status === 200) model.unregister(w.id);
      else this.unexpected("unregister", answer.status, answer.value);
    } else {
      const body = { ...base, block_size: Number(model.blockSize), dp_start: 0, dp_size: 2 };
      const answer = await this.call("register", w.home, "POST", "/register", body, { msgpack: true });
      if (answer.status === 201) model.register(w.id, 0n, 2n);
      else this.unexpected("register", answer.status, answer.value);
    }
    this.busy.delete(w.key);
  }

  async lifecycle(t) {
    const { model } = t;
    const idle = [];
    for (const [id, r] of model.requests) {
      if (!this.busy.has(id) && !this.frontends?.dead(r.owner)) idle.push(id);
      if (idle.length >= 16) break;
    }
    // The oldest idle request is ended once it is `maxAgeMs` old (sent that long ago), well before
    // the tracker could expire it: the model stays exact, and the replicas' merge records, kept for
    // the expiry age past each change, reach their steady size during the run.
    const oldest = idle.length > 0 ? model.requests.get(idle[0]) : undefined;
    const due = oldest !== undefined && Date.now() - oldest.sentAt >= this.maxAgeMs;
    const grow = !due && model.requests.size < this.liveTarget && (this.random() < 0.55 || idle.length === 0);
    if (grow) return this.create(t);
    const id = due ? idle[0] : this.pick(idle);
    const r = model.requests.get(id);
    this.busy.add(id);
    const body = { model_name: model.model, tenant_id: model.tenant, request_id: id };
    if (!due && !r.prefillDone && r.tokens > 0n && this.random() < 0.4) {
      const answer = await this.call("prefill_complete", r.home, "POST", "/prefill_complete", body);
      if (answer.status === 200) model.prefillComplete(id);
      else this.unexpected("prefill_complete", answer.status, answer.value);
    } else if (this.random() < 0.8) {
      const answer = await this.call("free", r.home, "POST", "/free", body, { msgpack: this.random() < 0.3 });
      if (answer.status === 200) model.free(id);
      else this.unexpected("free", answer.status, answer.value);
    } else {
      await this.batchFree(t, r.home, [id]);
    }
    this.busy.delete(id);
  }

  async create(t) {
    const { model } = t;
    const frontend = this.frontends?.pick(t);
    const owner = frontend?.owner;
    const home = frontend?.home ?? this.pick(this.replicas);
    const id = `${t.key}-${++this.counter}`;
    const hashes = this.prompt(t);
    const tokens = BigInt(Math.floor(this.random() * 2000));
    const roll = this.random();
    const sentAt = Date.now();
    this.busy.add(id);
    if (roll < 0.25) {
      const body = {
        model_name: model.model,
        tenant_id: model.tenant,
        request_id: id,
        sequence_hashes: this.wire(hashes),
        new_isl_tokens: tokens,
        ...(owner === undefined ? {} : { owner }),
      };
      const answer = await this.call("route", home, "POST", "/route", body, { binary: true });
      if (answer.status === 201) {
        model.add(id, {
          workerId: answer.value.worker_id,
          rank: BigInt(answer.value.dp_rank),
          hashes,
          tokens,
          home,
          sentAt,
          owner,
        });
      } else this.unexpected("route", answer.status, answer.value);
    } else if (roll < 0.4) {
      await this.batchAdd(t, home, id, hashes, tokens, owner);
    } else {
      const [workerId, w] = this.pick([...model.workers.entries()]);
      const rank = w.dpStart + BigInt(Math.floor(this.random() * Number(w.dpSize)));
      const body = {
        model_name: model.model,
        tenant_id: model.tenant,
        request_id: id,
        worker_id: workerId,
        dp_rank: rank,
        sequence_hashes: this.wire(hashes),
        new_isl_tokens: tokens,
        ...(owner === undefined ? {} : { owner }),
      };
      const answer = await this.call("add", home, "POST", "/add", body, { msgpack: this.random() < 0.4 });
      if (answer.status === 201) model.add(id, { workerId, rank, hashes, tokens, home, sentAt, owner });
      else this.unexpected("add", answer.status, answer.value);
    }
    this.busy.delete(id);
  }

  /** One `/batch` call: this add and a few more, all at `home` (all under `owner`'s lease, if given). */
  async batchAdd(t, home, firstId, firstHashes, firstTokens, owner) {
    const { model } = t;
    const adds = [{ id: firstId, hashes: firstHashes, tokens: firstTokens }];
    for (let i = Math.floor(this.random() * 5); i > 0; i--) {
      adds.push({
        id: `${t.key}-${++this.counter}`,
        hashes: this.prompt(t),
        tokens: BigInt(Math.floor(this.random() * 500)),
      });
    }
    const ops = adds.map((a) => {
      const [workerId, w] = this.pick([...model.workers.entries()]);
      a.workerId = workerId;
      a.rank = w.dpStart + BigInt(Math.floor(this.random() * Number(w.dpSize)));
      return {
        op: "add",
        request_id: a.id,
        worker_id: workerId,
        dp_rank: a.rank,
        sequence_hashes: this.wire(a.hashes),
        new_isl_tokens: a.tokens,
        ...(owner === undefined ? {} : { owner }),
      };
    });
    const sentAt = Date.now();
    const answer = await this.call(
      "batch",
      home,
      "POST",
      "/batch",
      { model_name: model.model, tenant_id: model.tenant, ops },
      { binary: true },
    );
    if (answer.status !== 200) return this.unexpected("batch", answer.status, answer.value);
    answer.value.results.forEach((result, i) => {
      const a = adds[i];
      if (result.status === 201)
        model.add(a.id, {
          workerId: a.workerId,
          rank: a.rank,
          hashes: a.hashes,
          tokens: a.tokens,
          home,
          sentAt,
          owner,
        });
      else this.unexpected("batch add", result.status, result.error);
    });
  }

  /** One `/batch` call freeing `ids` (all booked at `home`). */
  async batchFree(t, home, ids) {
    const { model } = t;
    const ops = ids.map((id) => ({ op: "free", request_id: id }));
    const answer = await this.call(
      "batch",
      home,
      "POST",
      "/batch",
      { model_name: model.model, tenant_id: model.tenant, ops },
      { msgpack: true, binary: true },
    );
    if (answer.status !== 200) return this.unexpected("batch", answer.status, answer.value);
    answer.value.results.forEach((result, i) => {
      if (result.status === 200) model.free(ids[i]);
      else this.unexpected("batch free", result.status, result.error);
    });
  }
}
