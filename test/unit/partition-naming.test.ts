/**
 * The partition's two names (SPEC §3.1), the pure parts: which name a request used (general and
 * MessagePack fast paths alike), how a tracker's text is renamed for it (exactly, never touching what
 * a client chose), what `PARTITION_FIELD` means, and what the OpenAPI document says of listing rows.
 */
import { encode } from "@msgpack/msgpack";
import { afterEach, describe, expect, it, vi } from "vitest";
import { text } from "../../durable-objects/core/messages";
import type { ErrorCode } from "../../durable-objects/types";
import { openApiDocument } from "../../src/docs/openapi";
import {
  configuredPartitionField,
  partitionEntry,
  renameBatchResults,
  renamePartition,
} from "../../src/http/partition";
import { partitionFieldOf } from "../../src/schema/partition";
import { addBody, listingQuery, requestIdBody } from "../../src/schema/requests";
import { parseJson } from "../../src/wire/json";
import { fastAddBody, fastRequestIdBody } from "../../src/wire/msgpack-bodies";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the name a request gave the partition", () => {
  it("is the one name that carried a value; neither, both or only nulls name none", () => {
    expect(partitionFieldOf({ tenant_id: "a" })).toBe("tenant_id");
    expect(partitionFieldOf({ routing_group: "a" })).toBe("routing_group");
    expect(partitionFieldOf({})).toBeUndefined();
    expect(partitionFieldOf({ tenant_id: "a", routing_group: "a" })).toBeUndefined();
    expect(partitionFieldOf({ tenant_id: null, routing_group: "g" })).toBe("routing_group");
    expect(partitionFieldOf({ tenant_id: "t", routing_group: null })).toBe("tenant_id");
    expect(partitionFieldOf({ routing_group: null })).toBeUndefined();
  });

  it("is recorded by every tracker body and the listing query, beside the partition itself", () => {
    const free = (body: string) => requestIdBody.parse(parseJson(body), "");
    expect(free('{"model_name":"m","routing_group":"g","request_id":"r"}')).toEqual({
      model_name: "m",
      tenant_id: "g",
      request_id: "r",
      partitionField: "routing_group",
    });
    expect(free('{"model_name":"m","tenant_id":"g","request_id":"r"}').partitionField).toBe("tenant_id");
    expect(free('{"model_name":"m","request_id":"r"}')).toMatchObject({
      tenant_id: "default",
      partitionField: undefined,
    });
    // A body cannot claim a name it did not use.
    expect(
      free('{"model_name":"m","tenant_id":"g","request_id":"r","partitionField":"routing_group"}')
        .partitionField,
    ).toBe("tenant_id");
    expect(listingQuery.parse({ routing_group: "g" }, "")).toEqual({
      model_name: undefined,
      tenant_id: "g",
      partitionField: "routing_group",
    });
  });

  it("is recorded by the MessagePack fast path as by the general path", () => {
    const add = { model_name: "m", request_id: "r", worker_id: 1, dp_rank: 0, sequence_hashes: [1] };
    for (const [extra, named] of [
      [{ routing_group: "g" }, "routing_group"],
      [{ tenant_id: "g" }, "tenant_id"],
      [{ routing_group: null }, undefined],
      [{}, undefined],
    ] as const) {
      const bytes = encode({ ...add, ...extra });
      expect(fastAddBody(bytes)?.partitionField).toBe(named);
      expect(addBody.parse({ ...add, ...extra }, "").partitionField).toBe(named);
    }
    expect(fastRequestIdBody(encode({ model_name: "m", routing_group: "g", request_id: "r" }))).toEqual({
      model_name: "m",
      tenant_id: "g",
      request_id: "r",
      partitionField: "routing_group",
    });
  });
});

describe("a tracker's text renamed for the request", () => {
  const tracker = { model: "m", tenant: "g" };

  it("says routing_group= in every text that names the tracker, and leaves tenant= for tenant_id", () => {
    const texts: [ErrorCode, string, string][] = [
      [
        "block_size_mismatch",
        text.blockSizeMismatch("m", "g", 16, 32),
        "block_size mismatch for model=m routing_group=g: existing=16, requested=32",
      ],
      [
        "duplicate_worker",
        text.duplicateWorker(7n, "m", "g"),
        "worker 7 already registered for model=m routing_group=g",
      ],
      [
        "worker_not_found",
        text.workerNotFound(7n, "m", "g"),
        "worker 7 not found for model=m routing_group=g",
      ],
      ["tracker_not_found", text.trackerNotFound("m", "g"), "no slot tracker for model=m routing_group=g"],
      [
        "no_worker",
        text.noDecodeWorker("m", "g"),
        "no decode worker registered for model=m routing_group=g: every registered worker is a prefill worker",
      ],
    ];
    for (const [code, first, second] of texts) {
      expect(renamePartition(first, code, tracker, "routing_group")).toBe(second);
      expect(renamePartition(first, code, tracker, "tenant_id")).toBe(first);
    }
  });

  it("never touches a text whose code names no tracker, whatever a client put in it", () => {
    const sneaky = "model=m tenant=g";
    const requestNotFound = text.requestNotFound(sneaky);
    expect(renamePartition(requestNotFound, "request_not_found", tracker, "routing_group")).toBe(
      requestNotFound,
    );
    const duplicate = text.duplicateRequest(sneaky, 1n, 0);
    expect(renamePartition(duplicate, "duplicate_request", tracker, "routing_group")).toBe(duplicate);
  });

  it("renames only the tracker's own phrase when a model or tenant holds `tenant=` itself", () => {
    const odd = { model: "a tenant=b", tenant: "c tenant=d" };
    expect(
      renamePartition(text.trackerNotFound(odd.model, odd.tenant), "tracker_not_found", odd, "routing_group"),
    ).toBe("no slot tracker for model=a tenant=b routing_group=c tenant=d");
    expect(
      renamePartition(
        text.workerNotFound(9n, odd.model, odd.tenant),
        "worker_not_found",
        odd,
        "routing_group",
      ),
    ).toBe("worker 9 not found for model=a tenant=b routing_group=c tenant=d");
  });

  it("renames a batch's per-op 'no slot tracker' results and nothing else", () => {
    const missing = text.trackerNotFound("m", "g");
    const results = [
      { status: 404, error: missing },
      { status: 404, error: text.requestNotFound("model=m tenant=g") },
      { status: 200 },
    ];
    expect(renameBatchResults(structuredClone(results), tracker, "tenant_id")).toEqual(results);
    expect(renameBatchResults(structuredClone(results), tracker, "routing_group")).toEqual([
      { status: 404, error: "no slot tracker for model=m routing_group=g" },
      results[1],
      results[2],
    ]);
  });
});

describe("PARTITION_FIELD", () => {
  it("is tenant_id unless set to routing_group", () => {
    expect(configuredPartitionField({})).toBe("tenant_id");
    expect(configuredPartitionField({ PARTITION_FIELD: "tenant_id" })).toBe("tenant_id");
    expect(configuredPartitionField({ PARTITION_FIELD: "routing_group" })).toBe("routing_group");
  });

  it("falls back to tenant_id for any other value, logging the value once", () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    for (let i = 0; i < 3; i++)
      expect(configuredPartitionField({ PARTITION_FIELD: "routing-group" })).toBe("tenant_id");
    expect(error).toHaveBeenCalledTimes(1);
    expect(String(error.mock.calls[0]?.[0])).toContain('not \\"routing-group\\"');
  });

  it("names a row's partition with one key, never both", () => {
    expect(partitionEntry("tenant_id", "g")).toEqual({ tenant_id: "g" });
    expect(partitionEntry("routing_group", "g")).toEqual({ routing_group: "g" });
  });
});

describe("the OpenAPI document", () => {
  type Node = Record<string, unknown>;
  const rowOf = (name: string) => {
    const schemas = (openApiDocument().components as Node).schemas as Record<string, Node>;
    return schemas[name]?.items as Node;
  };

  it("documents both names of a listing row's partition, exactly one of them present", () => {
    for (const name of ["WorkersResponse", "LoadsResponse"]) {
      const row = rowOf(name);
      expect(Object.keys(row.properties as Node)).toEqual(
        expect.arrayContaining(["tenant_id", "routing_group"]),
      );
      expect(row.required).not.toContain("tenant_id");
      expect(row.required).toContain("model_name");
      expect(row.oneOf).toEqual([{ required: ["tenant_id"] }, { required: ["routing_group"] }]);
    }
  });

  it("documents routing_group as a query parameter of the listings", () => {
    const paths = openApiDocument().paths as Record<string, Record<string, Node>>;
    for (const path of ["/workers", "/loads"]) {
      const parameters = (paths[path]?.get?.parameters ?? []) as Node[];
      const names = parameters.map((p) => p.name);
      expect(names).toEqual(expect.arrayContaining(["tenant_id", "routing_group"]));
    }
  });
});
