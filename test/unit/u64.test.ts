import { describe, expect, it } from "vitest";
import { blobDecimal, blobToU64, u64ToBlob, workerIdBlob } from "../../durable-objects/storage/u64";

describe("u64 BLOBs", () => {
  it("gives a worker id one BLOB, exact above 2^53, with its decimal form", () => {
    const id = 2n ** 64n - 3n;
    const blob = workerIdBlob(id);
    expect(workerIdBlob(id)).toBe(blob);
    expect(blobToU64(blob)).toBe(id);
    expect(blobDecimal(blob)).toBe("18446744073709551613");
    // A BLOB read back from SQLite is a different buffer: its decimal form is computed.
    expect(blobDecimal(u64ToBlob(2n ** 53n + 1n))).toBe("9007199254740993");
  });

  it("starts over past its bound of ids, still answering each exactly", () => {
    const first = workerIdBlob(1n);
    for (let id = 2n; id < 5_000n; id++) expect(blobToU64(workerIdBlob(id))).toBe(id);
    const again = workerIdBlob(1n);
    expect(blobToU64(again)).toBe(1n);
    expect(again).not.toBe(first);
  });
});
