/**
 * Which replica serves a request: the one named in `x-slot-tracker-replica`, else the replica whose
 * name is the location hint nearest the caller (from `request.cf`), else the first configured one.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { DEFAULT_REPLICA, parseReplicas } from "../../durable-objects/naming";
import { HttpError } from "./errors";

export { DEFAULT_REPLICA, locationHintOf, parseReplicas } from "../../durable-objects/naming";

export const REPLICA_HEADER = "x-slot-tracker-replica";

/** Countries Cloudflare's `me` region serves; `cf.continent` files them under AS. */
const MIDDLE_EAST: ReadonlySet<string> = new Set([
  "AE",
  "BH",
  "IL",
  "IQ",
  "IR",
  "JO",
  "KW",
  "LB",
  "OM",
  "PS",
  "QA",
  "SA",
  "SY",
  "YE",
]);

/** The subset of `request.cf` that placement uses. */
export interface CallerGeo {
  continent?: string;
  country?: string;
  longitude?: string;
}

/** Hints nearest the caller, best first; two when a continent has an east and a west region. */
function nearestHints(geo: CallerGeo): string[] {
  const longitude = geo.longitude === undefined ? Number.NaN : Number(geo.longitude);
  const preferred: string[] = geo.country !== undefined && MIDDLE_EAST.has(geo.country) ? ["me"] : [];
  switch (geo.continent) {
    case "NA":
      // The Rockies split Cloudflare's western and eastern North American regions near 100°W.
      preferred.push(...(longitude < -100 ? ["wnam", "enam"] : ["enam", "wnam"]));
      break;
    case "EU":
      preferred.push(...(longitude >= 20 ? ["eeur", "weur"] : ["weur", "eeur"]));
      break;
    case "SA":
      preferred.push("sam");
      break;
    case "AS":
      preferred.push("apac");
      break;
    case "OC":
      preferred.push("oc");
      break;
    case "AF":
      preferred.push("afr");
      break;
  }
  return preferred;
}

export function chooseReplica(
  replicas: readonly string[],
  requested: string | undefined,
  geo: CallerGeo | undefined,
): string {
  const named = requested?.trim();
  if (named !== undefined && named !== "") {
    if (replicas.includes(named)) return named;
    throw new HttpError(
      400,
      `unknown replica ${JSON.stringify(named)}; known replicas: ${replicas.join(", ")}`,
    );
  }
  if (geo !== undefined) {
    const near = nearestHints(geo).find((hint) => replicas.includes(hint));
    if (near !== undefined) return near;
  }
  return replicas[0] ?? DEFAULT_REPLICA;
}

/** Reads the placement fields of `request.cf` defensively: it is absent outside Cloudflare. */
export function geoOf(cf: unknown): CallerGeo | undefined {
  if (typeof cf !== "object" || cf === null) return undefined;
  const { continent, country, longitude } = cf as Record<string, unknown>;
  return {
    continent: typeof continent === "string" ? continent : undefined,
    country: typeof country === "string" ? country : undefined,
    longitude: typeof longitude === "string" || typeof longitude === "number" ? String(longitude) : undefined,
  };
}

/** `REPLICAS` parsed once per distinct value (it is on every request's path). */
let parsedFrom: string | undefined;
let parsed: string[] = parseReplicas(undefined);

/**
 * The replica serving this request. `request.cf` is read only when it can decide: reading it builds
 * the object, which showed in profiles of a one-replica deployment that never needs it.
 */
export function replicaOf(c: Context<AppEnv>): string {
  if (c.env.REPLICAS !== parsedFrom) {
    parsed = parseReplicas(c.env.REPLICAS);
    parsedFrom = c.env.REPLICAS;
  }
  const requested = c.req.header(REPLICA_HEADER);
  if (requested === undefined && parsed.length === 1) return parsed[0]!;
  const geo = requested === undefined ? geoOf((c.req.raw as { cf?: unknown }).cf) : undefined;
  return chooseReplica(parsed, requested, geo);
}
