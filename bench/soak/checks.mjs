/**
 * The soak's end-of-run checks: replication quiet everywhere, each replica's listings against the
 * model and the replicas against each other, and the heap's trend.
 */
import { decode } from "@msgpack/msgpack";
import { exact, show } from "./model.mjs";

/** Least-squares slope of `y` over `x` across `samples`. */
export function trend(samples, x, y) {
  const n = samples.length;
  if (n < 2) return 0;
  const mx = samples.reduce((s, m) => s + m[x], 0) / n;
  const my = samples.reduce((s, m) => s + m[y], 0) / n;
  const num = samples.reduce((s, m) => s + (m[x] - mx) * (m[y] - my), 0);
  const den = samples.reduce((s, m) => s + (m[x] - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

/** Waits until no replica has an event queued for a peer and every peer is ok. */
export async function quiesce(load, models, replicas, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let detail = "";
  for (;;) {
    const views = [];
    for (const model of models) {
      for (const r of replicas) {
        const q = `?model_name=${encodeURIComponent(model.model)}&tenant_id=${model.tenant}`;
        const answer = await load.call("replica_sync", r, "GET", `/replica_sync/peers${q}`);
        const peers = answer.status === 200 ? JSON.parse(answer.value).peers : [];
        views.push(...peers.map((p) => ({ at: `${model.model}/${model.tenant}@${r}→${p.peer}`, ...p })));
      }
    }
    const behind = views.filter((p) => p.state !== "ok" || p.queued_events !== 0);
    detail =
      behind.length === 0
        ? `${views.length} peer links`
        : `${behind.length} behind: ${behind
            .slice(0, 3)
            .map((p) => `${p.at} ${p.state} ${p.queued_events}`)
            .join(", ")}`;
    if (behind.length === 0 && views.length > 0) return { ok: true, detail };
    if (Date.now() > deadline) return { ok: false, detail };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Each replica's listings against the model, and the replicas against each other. */
export async function compare(load, model, replicas, check) {
  const q = `?model_name=${encodeURIComponent(model.model)}&tenant_id=${model.tenant}`;
  const name = `${model.model}/${model.tenant}`;
  const expected = { workers: show(model.workerRows()), loads: show(model.loadRows()) };
  const probe = [...(model.requests.values().next().value?.hashes ?? [1n, 2n]), 42n];
  const potentials = [];
  for (const r of replicas) {
    for (const kind of ["workers", "loads"]) {
      const answer = await load.call(kind, r, "GET", `/${kind}${q}`, undefined, { binary: true });
      const got = answer.status === 200 ? show(exact(answer.value)) : `${answer.status}`;
      check(
        `${name} @${r}: /${kind} equals the model`,
        got === expected[kind],
        got === expected[kind]
          ? `${exact(answer.value).length} rows`
          : `got ${got.slice(0, 300)} expected ${expected[kind].slice(0, 300)}`,
      );
    }
    const body = {
      model_name: model.model,
      tenant_id: model.tenant,
      sequence_hashes: probe,
      new_isl_tokens: 7,
    };
    const answer = await load.call("potential_loads", r, "POST", "/potential_loads", body, { binary: true });
    potentials.push(
      answer.status === 200 ? show(exact(answer.value)) : `${answer.status} ${decodeSafe(answer.value)}`,
    );
  }
  if (model.workers.size > 0) {
    check(
      `${name}: replicas agree on /potential_loads`,
      potentials.every((p) => p === potentials[0]),
      potentials[0].slice(0, 120),
    );
  }
}

function decodeSafe(value) {
  try {
    return value instanceof Uint8Array ? show(decode(value)) : String(value);
  } catch {
    return String(value);
  }
}
