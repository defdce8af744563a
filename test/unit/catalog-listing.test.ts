import { describe, expect, it } from "vitest";
import {
  listRecords,
  partitionNotReady,
  readiness,
} from "../../durable-objects/core/catalog/catalog-listing";
import type { CatalogRecord } from "../../durable-objects/core/catalog/catalog-record";
import {
  catalogView,
  recordOfRegistration,
  slotTrackerEntry,
} from "../../durable-objects/core/catalog/slot-tracker-meeting";
import { BIG_ID, built, COMPLETE } from "./catalog-fixtures";

describe("GET /workers and GET /ready", () => {
  const records = [
    built({ ...COMPLETE, workerId: BIG_ID, model: "m", tenant: "b" }).record,
    built({ ...COMPLETE, workerId: 9007199254740993n, model: "m", tenant: "b" }).record,
    built({ workerId: 1n, model: "m", tenant: "a" }).record,
    built({ ...COMPLETE, workerId: 2n, model: "\u{1F600}" }).record,
    built({ ...COMPLETE, workerId: 3n, model: "\uFF5E" }).record,
  ];
  const key = (r: CatalogRecord) => `${r.model}/${r.tenant}/${r.workerId}`;

  it("sorts by model, routing group and worker id, names by UTF-8 bytes", () => {
    expect(listRecords(records).map(key)).toEqual([
      "m/a/1",
      "m/b/9007199254740993",
      `m/b/${BIG_ID}`,
      "\uFF5E/default/3",
      "\u{1F600}/default/2",
    ]);
  });

  it("filters on model and routing group", () => {
    expect(listRecords(records, { model: "m", tenant: "b" }).map((r) => r.workerId)).toEqual([
      9007199254740993n,
      BIG_ID,
    ]);
    expect(listRecords(records, { tenant: "default" })).toHaveLength(2);
  });

  it("is ready with a schedulable worker anywhere, and counts them catalog-wide", () => {
    const ready = readiness(records);
    expect(ready.ready).toBe(true);
    expect(ready.schedulableWorkers).toBe(4);
    expect(ready.workers.map(key)).toEqual(listRecords(records).map(key));
    expect(readiness(records, true).ready).toBe(false);
    expect(readiness([records[2]!])).toMatchObject({ ready: false, schedulableWorkers: 0 });
  });

  it("names the partition or the whole catalog when nothing can be selected", () => {
    expect(partitionNotReady(records, "m", "b")).toBeUndefined();
    expect(partitionNotReady(records, "m", "a")?.message).toBe(
      "no schedulable workers for model=m routing_group=a",
    );
    expect(partitionNotReady([records[2]!], "m", "a")?.message).toBe("no schedulable workers are available");
  });
});

describe("the slot-tracker API's workers in the catalog", () => {
  const registered = { workerId: BIG_ID, blockSize: 16, dpStart: 2, dpSize: 2 };

  it("lists a /register-ed worker as incomplete for want of an endpoint", () => {
    const record = recordOfRegistration(registered, "llama", "acme");
    expect(record).toMatchObject({
      workerId: BIG_ID,
      model: "llama",
      tenant: "acme",
      blockSize: 16,
      dpStart: 2,
      dpSize: 2,
      lifecycle: "incomplete",
      notSchedulableReasons: ["endpoint is required"],
    });
    const schedulable = built({ ...COMPLETE, workerId: BIG_ID, model: "llama", tenant: "acme" }).record;
    expect(catalogView(new Map([[BIG_ID, schedulable]]), [registered], "llama", "acme")).toEqual([
      schedulable,
    ]);
    expect(catalogView(new Map(), [registered], "llama", "acme")).toEqual([record]);
  });

  it("puts a record in the slot tracker once it has a block size and joins no other block size", () => {
    const fix = { blockSize: 16, isEagle: false };
    expect(slotTrackerEntry(built({ ...COMPLETE, dpStart: 4, dpSize: 2 }).record, fix)).toEqual({
      workerId: 7n,
      blockSize: 16,
      dpStart: 4,
      dpSize: 2,
    });
    const noEndpoint = built({ workerId: 8n, blockSize: 16 }).record;
    expect(slotTrackerEntry(noEndpoint, fix)?.dpSize).toBe(1);
    expect(slotTrackerEntry(noEndpoint, undefined)).toBeUndefined();
    expect(slotTrackerEntry(noEndpoint, { blockSize: 32, isEagle: false })).toBeUndefined();
    expect(slotTrackerEntry(built({ workerId: 8n, endpoint: "e" }).record, fix)).toBeUndefined();
    expect(slotTrackerEntry(built({ ...COMPLETE, dpSize: 0 }).record, fix)).toBeUndefined();
  });
});
