/**
 * `POST /selection/replica_sync/register_peer` and `deregister_peer`: Dynamo's peer body,
 * `{"endpoint": "tcp://host:port"}`, refused in serde's words like the catalog's bodies. The
 * endpoint is read and not dialled: this service's peers are the `REPLICAS` variable's.
 */
import { MAX_CATALOG_TEXT_BYTES } from "../../../durable-objects/limits";
import { describe } from "../schema";
import { axumJsonBody, serdeString, serdeStruct } from "./serde-schemas";

export const replicaPeerBody = axumJsonBody(
  serdeStruct("PeerRequest", {
    endpoint: describe(
      serdeString({ minBytes: 0, maxBytes: MAX_CATALOG_TEXT_BYTES }),
      "A peer's replica-sync endpoint (Dynamo: `tcp://host:port`).",
    ),
  }),
);
