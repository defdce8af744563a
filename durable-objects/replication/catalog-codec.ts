/**
 * The `data` of a catalog upsert (ours, not Dynamo's):
 *
 *   {"CatalogUpsert": {record, candidacy, agreed, keeps?, floors}}
 *
 * `record` as `catalog-record-codec.ts` writes it (its id is the event's `worker.worker_id`), and
 * the merge's bookkeeping (`core/replica/catalog-merge.ts`): keys are `{clock, origin}`, `agreed` a
 * bool, a range `[start, end]`, a floor `[start, end, clock, origin]`. `CatalogRemove` is a unit
 * variant, read in `event-decoder.ts`.
 */
import type { CatalogFields } from "../core/catalog/catalog-record";
import type { RankRange } from "../core/catalog/dp-ranks";
import type { FloorSegment } from "../core/catalog/rank-floors";
import type { EventKey } from "../core/replica/clock";
import type { CatalogUpsertEvent } from "../core/replica/events";
import { readFields, writeFields } from "./catalog-record-codec";
import { readMap, requireKeys } from "./map-fields";
import type { MsgpackReader } from "./msgpack-reader";
import type { MsgpackWriter } from "./msgpack-writer";

export type CatalogUpsertData = Pick<
  CatalogUpsertEvent,
  "fields" | "candidacy" | "agreed" | "keeps" | "floors"
>;

export function writeCatalogUpsert(w: MsgpackWriter, e: CatalogUpsertEvent): void {
  w.str("data");
  w.mapHeader(1);
  w.str("CatalogUpsert");
  w.mapHeader(e.keeps === undefined ? 4 : 5);
  w.str("record");
  writeFields(w, e.fields);
  w.str("candidacy");
  writeKey(w, e.candidacy);
  w.str("agreed");
  w.bool(e.agreed);
  if (e.keeps !== undefined) {
    w.str("keeps");
    writeRange(w, e.keeps);
  }
  w.str("floors");
  w.arrayHeader(e.floors.length);
  for (const floor of e.floors) {
    w.arrayHeader(4);
    w.u32(floor.start, "floor.start");
    w.u32(floor.end, "floor.end");
    w.uint(floor.key.ts, "floor.clock");
    w.str(floor.key.origin);
  }
}

function writeKey(w: MsgpackWriter, key: EventKey): void {
  w.mapHeader(2);
  w.str("clock");
  w.uint(key.ts, "clock");
  w.str("origin");
  w.str(key.origin);
}

function writeRange(w: MsgpackWriter, range: RankRange): void {
  w.arrayHeader(2);
  w.u32(range.start, "keeps.start");
  w.u32(range.end, "keeps.end");
}

export function readCatalogUpsert(r: MsgpackReader): { type: "catalog_upsert" } & CatalogUpsertData {
  let fields: CatalogFields | undefined;
  let candidacy: EventKey = { ts: 0, origin: "" };
  let agreed = false;
  let keeps: RankRange | undefined;
  const floors: FloorSegment[] = [];
  const seen = readMap(r, "CatalogUpsert", (key) => {
    switch (key) {
      case "record":
        fields = readFields(r);
        return 1;
      case "candidacy":
        candidacy = readKey(r, "candidacy");
        return 2;
      case "keeps":
        keeps = readRange(r);
        return 4;
      case "floors":
        for (let n = r.arrayHeader("floors"); n > 0; n--) {
          if (r.arrayHeader("floor") !== 4) r.fail("floor", "[start, end, clock, origin]");
          const start = r.u32("floor.start");
          const end = r.u32("floor.end");
          const ts = r.uint("floor.clock");
          floors.push({ start, end, key: { ts, origin: r.key("floor.origin") } });
        }
        return 8;
      case "agreed":
        agreed = r.bool("agreed");
        return 16;
      default:
        return 0;
    }
  });
  requireKeys("CatalogUpsert", seen, 27, "record, candidacy, agreed, floors");
  return { type: "catalog_upsert", fields: fields!, candidacy, agreed, ...(keeps && { keeps }), floors };
}

function readKey(r: MsgpackReader, what: string): EventKey {
  let ts = 0;
  let origin = "";
  const seen = readMap(r, what, (key) => {
    if (key === "clock") ts = r.uint(`${what}.clock`);
    else if (key === "origin") origin = r.key(`${what}.origin`);
    else return 0;
    return key === "clock" ? 1 : 2;
  });
  requireKeys(what, seen, 3, "clock, origin");
  return { ts, origin };
}

function readRange(r: MsgpackReader): RankRange {
  if (r.arrayHeader("keeps") !== 2) r.fail("keeps", "[start, end]");
  const start = r.u32("keeps.start");
  const end = r.u32("keeps.end");
  if (end < start) r.fail("keeps", "start ≤ end");
  return { start, end };
}
