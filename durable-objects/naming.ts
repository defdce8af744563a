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
