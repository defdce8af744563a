import fc from "fast-check";
import { expect, it } from "vitest";
import { EMPTY, IdTable } from "../../durable-objects/core/cache-index/id-table";

/** Probes for `id` the way the cache index's tables do: from its home to the first empty slot. */
function has(table: IdTable, hash: number, id: number): boolean {
  for (let s = table.home(hash); ; s = table.next(s)) {
    const at = table.candidate(s, hash);
    if (at === EMPTY) return false;
    if (at === id) return true;
  }
}

function insert(table: IdTable, id: number, hash: number): void {
  let s = table.home(hash);
  while (table.candidate(s, hash) !== EMPTY) s = table.next(s);
  table.fill(s, id, hash);
}

it("finds exactly the ids a set holds over inserts and deletes, with runs that collide and wrap", () => {
  // At most 41 ids in 64 slots: the table never grows, so homes stay where the hash puts them.
  const op = fc.record({ insert: fc.boolean(), id: fc.nat({ max: 40 }) });
  const ops = fc.array(op, { maxLength: 300, size: "max" });
  fc.assert(
    fc.property(ops, fc.constantFrom(1, 3, 17, 41), (steps, spread) => {
      // Few distinct homes (a 64-slot table's home is a hash's top 6 bits), the first at the table's
      // end: probe runs collide and wrap to slot 0. Hashes repeat, so keys are compared too.
      const hashOf = (id: number) => ((63 - (id % spread) * 5) & 63) << 26;
      const table = new IdTable(64);
      const model = new Set<number>();
      for (const { insert: adding, id } of steps) {
        if (adding && !model.has(id)) {
          insert(table, id, hashOf(id));
          model.add(id);
        } else if (!adding && model.has(id)) {
          table.delete(id, hashOf(id));
          model.delete(id);
        }
        expect(table.size).toBe(model.size);
      }
      for (let id = 0; id <= 40; id++) expect(has(table, hashOf(id), id)).toBe(model.has(id));
    }),
  );
});

it("keeps every id findable as it grows by half, at most three quarters full", () => {
  const live = new Set<number>();
  const hashOf = (id: number) => Math.imul(id, 0x9e3779b1);
  const table = new IdTable(16);
  for (let id = 0; id < 5_000; id++) {
    insert(table, id, hashOf(id));
    live.add(id);
    // Every third id leaves again, so growth meets the holes deletions left.
    if (id % 3 === 0) {
      table.delete(id, hashOf(id));
      live.delete(id);
    }
  }
  expect(table.size).toBe(live.size);
  const slots = table.bytes / 8;
  expect(live.size / slots).toBeLessThanOrEqual(0.75);
  expect(live.size / slots).toBeGreaterThan(0.75 / 1.5 / 1.5);
  for (let id = 0; id < 5_000; id++) expect(has(table, hashOf(id), id)).toBe(live.has(id));
});
