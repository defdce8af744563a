import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { directoryName } from "../../durable-objects/naming";

/** The directory's worker map: the newest list per partition wins, and ids find their partitions. */
describe("the directory's catalog worker map", () => {
  it("keeps the newest list of each partition, whatever order the reports arrive in", async () => {
    const directory = env.DIRECTORY.getByName(directoryName(`map-${crypto.randomUUID()}`));
    const big = 2n ** 64n - 1n;
    await directory.setCatalog("m", "b", [big, 2n], 10);
    await directory.setCatalog("m", "a", [big], 5);
    // A late retry of an older list changes nothing.
    await directory.setCatalog("m", "b", [3n], 9);
    expect(await directory.workerPartitions(big)).toEqual([
      { model: "m", tenant: "a" },
      { model: "m", tenant: "b" },
    ]);
    expect(await directory.workerPartitions(3n)).toEqual([]);
    await directory.setCatalog("m", "b", [3n], 11);
    expect(await directory.workerPartitions(big)).toEqual([{ model: "m", tenant: "a" }]);
    await directory.setCatalog("m", "a", [], 12);
    expect(await directory.listPartitions("m")).toEqual([{ model: "m", tenant: "b" }]);
    expect(await directory.listPartitions("other")).toEqual([]);
  });

  it("lists a tracker that has slot-tracker workers even before it reported a catalog list", async () => {
    const directory = env.DIRECTORY.getByName(directoryName(`map-${crypto.randomUUID()}`));
    await directory.setTracker("legacy", "default", true, 1);
    await directory.setCatalog("new", "g", [1n], 1);
    expect(await directory.listPartitions()).toEqual([
      { model: "legacy", tenant: "default" },
      { model: "new", tenant: "g" },
    ]);
  });
});
