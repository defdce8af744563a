import type { ReplicaEvent } from "../../durable-objects/core/replica/events";
import { applyReplicaEvent } from "../../durable-objects/core/replica/replica-merge";
import { NULL_STORE } from "../../durable-objects/core/store";
import { Tracker, type TrackerOptions } from "../../durable-objects/core/tracker";

/**
 * A replicated tracker whose shipped changes wait in `outbox` until a test hands them to another,
 * so each test fixes the order they arrive in (the property tests draw the orders at random).
 */
export class HandReplica {
  readonly outbox: ReplicaEvent[] = [];
  readonly tracker: Tracker;

  constructor(
    readonly name: string,
    options: Partial<TrackerOptions> = {},
    /** What a change goes through on its way (the wire codec, say); nothing by default. */
    private readonly travel: (event: ReplicaEvent) => ReplicaEvent = (event) => event,
  ) {
    this.tracker = new Tracker({
      model: "model",
      tenant: "default",
      ...options,
      origin: name,
      replicated: true,
      store: { ...NULL_STORE, emitted: (event) => this.outbox.push(event) },
    });
  }

  /** Hands everything this replica shipped so far to `to`, at `now`. */
  shipTo(to: HandReplica, now: number): void {
    for (const event of this.outbox.splice(0)) applyReplicaEvent(to.tracker, this.travel(event), now);
  }
}
