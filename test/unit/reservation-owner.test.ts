import { describe, expect, it } from "vitest";
import { OwnerMemory } from "../../src/http/reservation-owner";

const P = (model: string) => ({ model, tenant: "default" });

describe("an isolate's memory of reservation partitions", () => {
  it("keeps the most recently remembered ids up to its bound, dropping the oldest first", () => {
    const memory = new OwnerMemory(3);
    for (const id of ["a", "b", "c"]) memory.remember(id, P(`m-${id}`));
    // Remembering "a" again makes it the newest: "b" is now the oldest.
    memory.remember("a", P("m-a2"));
    memory.remember("d", P("m-d"));
    expect(memory.size).toBe(3);
    expect(memory.get("b")).toBeUndefined();
    expect(memory.get("a")).toEqual(P("m-a2"));
    expect(memory.get("c")).toEqual(P("m-c"));
    memory.forget("c");
    memory.forget("c");
    expect(memory.get("c")).toBeUndefined();
    expect(memory.size).toBe(2);
  });
});
