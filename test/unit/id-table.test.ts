import fc from "fast-check";
import { expect, it } from "vitest";
import { IdTable } from "../../durable-objects/core/cache-index/id-table";

/** Probes for `id` the way the cache index's tables do: from its home to the first empty slot. */
function has(table: IdTable, hashOf: (id: number) => number, id: number): boolean {
  for (let s = table.home(hashOf(id)); ; s = table.next(s)) {
    const at = table.at(s);
    if (at === -1) return false;
    if (at === id) return true;
  }
}

it("finds exactly the ids a set holds over inserts and deletes, with runs that collide and wrap", () => {
  const op = fc.record({ insert: fc.boolean(), id: fc.nat({ max: 60 }) });
  fc.assert(
    fc.property(
      fc.array(op, { maxLength: 300, size: "max" }),
      fc.constantFrom(1, 3, 17, 61),
      (ops, spread) => {
        // Few distinct homes, the last ones at the table's end: probe runs collide and wrap to slot 0.
        const hashOf = (id: number) => -1 - (id % spread);
        const table = new IdTable(hashOf, 16);
        const model = new Set<number>();
        for (const { insert, id } of ops) {
          if (insert && !model.has(id)) {
            let s = table.home(hashOf(id));
            while (table.at(s) !== -1) s = table.next(s);
            table.fill(s, id);
            model.add(id);
          } else if (!insert && model.has(id)) {
            table.delete(id);
            model.delete(id);
          }
          expect(table.size).toBe(model.size);
        }
        for (let id = 0; id <= 60; id++) expect(has(table, hashOf, id)).toBe(model.has(id));
      },
    ),
  );
});
