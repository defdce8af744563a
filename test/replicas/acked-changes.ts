/**
 * What the fault tests check after the dust settles: each request's calls with what the client learnt
 * of them, and the replicas' agreed live book and loads checked against it.
 */
import { expect } from "vitest";
import { converged, type LiveRow, liveBook, loads, type Replica } from "./fault-helpers";

/** What the client learnt of one call: applied, refused (4xx), or unknown (it failed: maybe applied). */
export type Outcome = "acked" | "refused" | "unknown";

export interface Tracked {
  id: string;
  home: Replica;
  rank: number;
  tokens: number;
  hashes: number[];
  steps: ("add" | "prefill_complete" | "free")[];
  outcomes: Partial<Record<"add" | "prefill_complete" | "free", Outcome>>;
}

export const outcomeOf = (status: number): Outcome =>
  status >= 200 && status < 300 ? "acked" : status >= 400 && status < 500 ? "refused" : "unknown";

/**
 * Checks each replica's live book against what the client was told: an acknowledged add is live
 * unless a free was acknowledged, an acknowledged free leaves nothing, an acknowledged completion
 * leaves no pending prefill, and a request that is live is exactly what its add said, once. Calls
 * that failed may have landed or not, but the replicas must agree on which (checked by the caller).
 */
function expectAcknowledged(book: LiveRow[], tracked: Tracked[]): void {
  const live = new Map(book.map((row) => [row.id, row]));
  expect(live.size).toBe(book.length);
  for (const t of tracked) {
    const row = live.get(t.id);
    const { add, prefill_complete: prefill, free } = t.outcomes;
    const what = `${t.id} ${JSON.stringify(t.outcomes)}`;
    expect(add, what).not.toBe("refused");
    if (free === "acked") expect(row, what).toBeUndefined();
    else if (add === "acked" && free === undefined) expect(row, what).toBeDefined();
    if (prefill === "acked" && free !== "acked")
      expect(row ?? "absent", `${what}: acked completion proves the add landed`).not.toBe("absent");
    if (!row) continue;
    expect(row, what).toEqual({
      id: t.id,
      workerId: "1",
      rank: t.rank,
      tokens: t.tokens,
      prefillPending: prefill === "acked" ? false : prefill === undefined ? t.tokens > 0 : row.prefillPending,
      hashes: t.hashes.map(String),
    });
  }
  const known = new Set(tracked.map((t) => t.id));
  for (const id of live.keys()) expect(known.has(id), `unexpected live request ${id}`).toBe(true);
}

/** The loads every replica reports, recomputed from its live book: nothing counted twice or missed. */
function loadsOfBook(model: string, book: LiveRow[]): object[] {
  return [0, 1, 2, 3].map((rank) => {
    const rows = book.filter((r) => r.rank === rank);
    return {
      model_name: model,
      tenant_id: "default",
      worker_id: 1,
      dp_rank: rank,
      active_prefill_tokens: rows.reduce((sum, r) => sum + (r.prefillPending ? r.tokens : 0), 0),
      active_decode_blocks: new Set(rows.flatMap((r) => r.hashes)).size,
    };
  });
}

/** Waits for the replicas to agree on loads and live book, then checks both against what clients learnt. */
export async function expectAgreement(model: string, tracked: Tracked[]): Promise<LiveRow[]> {
  const loadsText = await converged((r) => loads(r, model), 40_000);
  const book = await converged((r) => liveBook(r, model), 10_000);
  expectAcknowledged(book, tracked);
  expect(JSON.parse(loadsText)).toEqual(loadsOfBook(model, book));
  return book;
}
