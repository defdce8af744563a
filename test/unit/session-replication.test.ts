import { describe, expect, it } from "vitest";
import type { EventKey } from "../../durable-objects/core/replica/clock";
import type { BindEvent } from "../../durable-objects/core/replica/events";
import { SessionAffinity } from "../../durable-objects/core/routing/session-affinity";

const NOW = 1_780_000_000_000;

function bind(key: EventKey, workerId: bigint, expiresAt = NOW + 60_000): BindEvent {
  return { ...key, type: "bind", sessionId: "s", hop: "decode", workerId, dpRank: 0, expiresAt };
}

describe("session bindings across replicas", () => {
  it("keep the binding with the newest key whatever order they merge in", () => {
    const older = bind({ ts: 10, origin: "east" }, 1n);
    const newer = bind({ ts: 10, origin: "west" }, 2n);
    for (const order of [
      [older, newer],
      [newer, older],
      [newer, older, newer],
    ]) {
      const affinity = new SessionAffinity();
      for (const event of order) affinity.merge(event, NOW);
      expect(affinity.lookup("s", "decode", NOW)?.workerId).toBe(2n);
    }
  });

  it("ignore a binding that expired before it arrived", () => {
    const affinity = new SessionAffinity();
    affinity.merge(bind({ ts: 1, origin: "east" }, 1n, NOW - 1), NOW);
    expect(affinity.size).toBe(0);
  });

  it("stamp and ship the bindings made here, which a peer merges to the same binding", () => {
    const shipped: BindEvent[] = [];
    let ts = 100;
    const here = new SessionAffinity();
    here.replication = { stamp: () => ({ ts: ++ts, origin: "east" }), emit: (e) => shipped.push(e) };
    here.bind("s", "decode", 7n, 2, 30_000, NOW);
    expect(shipped).toEqual([
      {
        ts: 101,
        origin: "east",
        type: "bind",
        sessionId: "s",
        hop: "decode",
        workerId: 7n,
        dpRank: 2,
        expiresAt: NOW + 30_000,
      },
    ]);
    const peer = new SessionAffinity();
    peer.merge(bind({ ts: 50, origin: "west" }, 9n), NOW);
    for (const event of shipped) peer.merge(event, NOW);
    expect(peer.lookup("s", "decode", NOW)).toEqual(here.lookup("s", "decode", NOW));
    expect([...peer.snapshot()]).toEqual(shipped);
  });
});
