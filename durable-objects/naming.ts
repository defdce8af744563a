import type { TrackerKey } from "./types";

/**
 * The deterministic object name of a tracker. JSON keeps the three parts unambiguous whatever
 * characters a model or tenant name contains; the same name always reaches the same object.
 */
export function trackerName(key: TrackerKey): string {
  return JSON.stringify([key.replica, key.model, key.tenant]);
}

/** Inverse of {@link trackerName}; `undefined` for a name that is not a tracker name. */
export function parseTrackerName(name: string | undefined): TrackerKey | undefined {
  if (name === undefined) return undefined;
  try {
    const parts: unknown = JSON.parse(name);
    if (!Array.isArray(parts) || parts.length !== 3) return undefined;
    const [replica, model, tenant] = parts;
    if (typeof replica !== "string" || typeof model !== "string" || typeof tenant !== "string")
      return undefined;
    return { replica, model, tenant };
  } catch {
    return undefined;
  }
}

/** The directory object of one replica: it lists that replica's trackers for unfiltered listings. */
export function directoryName(replica: string): string {
  return `directory:${replica}`;
}

export const DEFAULT_REPLICA = "primary";

const LOCATION_HINTS: ReadonlySet<string> = new Set<DurableObjectLocationHint>([
  "wnam",
  "enam",
  "sam",
  "weur",
  "eeur",
  "apac",
  "oc",
  "afr",
  "me",
]);

/** Replica names from `REPLICAS`: comma-separated, trimmed, de-duplicated, never empty. */
export function parseReplicas(raw: string | undefined): string[] {
  const names = [...new Set((raw ?? "").split(",").map((name) => name.trim()))].filter((name) => name !== "");
  return names.length > 0 ? names : [DEFAULT_REPLICA];
}

/** The Durable Object location hint a replica's objects are created with, if its name is one. */
export function locationHintOf(replica: string): DurableObjectLocationHint | undefined {
  return LOCATION_HINTS.has(replica) ? (replica as DurableObjectLocationHint) : undefined;
}
