import { describe, expect, it } from "vitest";
import { RoutingState, routeRequest } from "../../durable-objects/core/routing/route-request";
import { seededRng } from "../../durable-objects/core/routing/rng";
import {
  type AffinityStore,
  type Hop,
  SessionAffinity,
  type SessionBinding,
} from "../../durable-objects/core/routing/session-affinity";
import type { RouteInput, RouterCard } from "../../durable-objects/types";
import { h, T0, tracker } from "./tracker-fixtures";

/** A store that mirrors the bindings the way the SQLite table would. */
class TableStore implements AffinityStore {
  readonly rows = new Map<string, SessionBinding>();
  bound(binding: SessionBinding): void {
    this.rows.set(`${binding.hop}/${binding.sessionId}`, binding);
  }
  unbound(sessionId: string, hop: Hop): void {
    this.rows.delete(`${hop}/${sessionId}`);
  }
}

describe("session bindings", () => {
  it("hold while fresh and end once the clock passes the TTL", () => {
    const store = new TableStore();
    const affinity = new SessionAffinity(store);
    affinity.bind("s", "decode", 7n, 1, 10_000, T0);
    expect(affinity.lookup("s", "decode", T0 + 10_000)).toMatchObject({ workerId: 7n, dpRank: 1 });
    expect(affinity.lookup("s", "prefill", T0)).toBeUndefined();
    expect(affinity.lookup("s", "decode", T0 + 10_001)).toBeUndefined();
    expect(store.rows.size).toBe(0);
    expect(affinity.size).toBe(0);
  });

  it("count the TTL from the session's last routed request", () => {
    const affinity = new SessionAffinity();
    affinity.bind("s", "decode", 7n, 0, 10_000, T0);
    affinity.bind("s", "decode", 7n, 0, 10_000, T0 + 8_000);
    expect(affinity.lookup("s", "decode", T0 + 17_000)).toMatchObject({ expiresAt: T0 + 18_000 });
  });

  it("sweep stale bindings from the least recently routed end, and evict the oldest past the cap", () => {
    const store = new TableStore();
    const affinity = new SessionAffinity(store, 2);
    affinity.bind("a", "decode", 1n, 0, 1_000, T0);
    affinity.bind("b", "decode", 1n, 0, 60_000, T0);
    affinity.bind("c", "decode", 1n, 0, 60_000, T0 + 5_000);
    // "a" was stale at the third bind; nothing needed evicting beyond it.
    expect([...affinity.entries()].map((b) => b.sessionId)).toEqual(["b", "c"]);
    affinity.bind("d", "decode", 1n, 0, 60_000, T0 + 6_000);
    expect([...affinity.entries()].map((b) => b.sessionId)).toEqual(["c", "d"]);
    expect([...store.rows.keys()].sort()).toEqual(["decode/c", "decode/d"]);
  });

  it("come back from storage without being written again", () => {
    const store = new TableStore();
    const affinity = new SessionAffinity(store);
    affinity.restore({ sessionId: "s", hop: "prefill", workerId: 3n, dpRank: 0, expiresAt: T0 + 5 });
    expect(store.rows.size).toBe(0);
    expect(affinity.lookup("s", "prefill", T0)).toMatchObject({ workerId: 3n });
  });
});

const AFFINITY_CARD: RouterCard = { routerMode: "kv", sessionAffinityTtlSecs: 30 };

function routeInput(requestId: string, sessionId?: string, prompt = [1, 2, 3]): RouteInput {
  return {
    requestId,
    hashes: h(...prompt.map((x) => x + requestId.length * 1000 + requestId.charCodeAt(0) * 100_000)),
    newIslTokens: 32,
    ...(sessionId !== undefined && { sessionId }),
  };
}

describe("session affinity in /route", () => {
  it("keeps a session on its worker while the binding is fresh, even when that worker is the busiest", () => {
    const t = tracker();
    for (const id of [1, 2, 3])
      t.register(
        { workerId: BigInt(id), blockSize: 16, dpStart: 0, dpSize: 1, routerConfig: AFFINITY_CARD },
        T0,
      );
    const state = new RoutingState();
    const rng = seededRng(1);
    const first = routeRequest(t, state, routeInput("r0", "chat"), T0, rng);
    if (!first.ok) throw new Error(first.message);
    const home = first.decode.workerId;
    for (let i = 1; i <= 5; i++) {
      const next = routeRequest(t, state, routeInput(`r${i}`, "chat"), T0 + i * 1_000, rng);
      expect(next.ok && next.decode.workerId).toBe(home);
    }
    // Without the session, the next request avoids the loaded worker.
    const other = routeRequest(t, state, routeInput("x"), T0 + 6_000, rng);
    expect(other.ok && other.decode.workerId).not.toBe(home);
  });

  it("lets the binding lapse after the TTL", () => {
    const t = tracker();
    for (const id of [1, 2])
      t.register(
        { workerId: BigInt(id), blockSize: 16, dpStart: 0, dpSize: 1, routerConfig: AFFINITY_CARD },
        T0,
      );
    const state = new RoutingState();
    const first = routeRequest(t, state, routeInput("a", "chat"), T0, seededRng(1));
    if (!first.ok) throw new Error(first.message);
    expect(state.affinity.lookup("chat", "decode", T0 + 30_000)).toBeDefined();
    expect(state.affinity.lookup("chat", "decode", T0 + 30_001)).toBeUndefined();
    // After the lapse the session goes where the cost says: the idle worker.
    const later = routeRequest(t, state, routeInput("b", "chat"), T0 + 30_001, seededRng(1));
    expect(later.ok && later.decode.workerId).not.toBe(first.decode.workerId);
  });

  it("falls back to a normal choice when the bound worker has gone", () => {
    const t = tracker();
    for (const id of [1, 2])
      t.register(
        { workerId: BigInt(id), blockSize: 16, dpStart: 0, dpSize: 1, routerConfig: AFFINITY_CARD },
        T0,
      );
    const state = new RoutingState();
    const first = routeRequest(t, state, routeInput("a", "chat"), T0, seededRng(1));
    if (!first.ok) throw new Error(first.message);
    t.unregister(first.decode.workerId, T0 + 1);
    const next = routeRequest(t, state, routeInput("b", "chat"), T0 + 2, seededRng(1));
    if (!next.ok) throw new Error(next.message);
    expect(next.decode.workerId).not.toBe(first.decode.workerId);
    expect(state.affinity.lookup("chat", "decode", T0 + 3)).toMatchObject({ workerId: next.decode.workerId });
  });

  it("is off when the set's card sets no TTL", () => {
    const t = tracker();
    for (const id of [1, 2])
      t.register(
        { workerId: BigInt(id), blockSize: 16, dpStart: 0, dpSize: 1, routerConfig: { routerMode: "kv" } },
        T0,
      );
    const state = new RoutingState();
    const a = routeRequest(t, state, routeInput("a", "chat"), T0, seededRng(1));
    const b = routeRequest(t, state, routeInput("b", "chat"), T0, seededRng(1));
    expect(a.ok && b.ok && a.decode.workerId !== b.decode.workerId).toBe(true);
    expect(state.affinity.size).toBe(0);
  });
});
