/**
 * An event's `medium` as the tier its blocks live in: Dynamo's `StorageTier::from_kv_medium`, names
 * matched exactly (upper case, as vLLM, SGLang and Dynamo's own publishers send them). No medium, nil
 * or "" is the device: vLLM before #19737 sent none, and newer vLLM sends "GPU".
 */
import type { StorageTier } from "../../../durable-objects/core/cache-index/cache-index";

const TIERS = new Map<string, StorageTier>([
  ["GPU", "device"],
  ["DEVICE", "device"],
  ["CPU", "host_pinned"],
  ["CPU_PINNED", "host_pinned"],
  ["CPU_TIER1", "host_pinned"],
  ["CPU_TIER2", "disk"],
  ["DISK", "disk"],
  ["NVME", "disk"],
  // vLLM's offloading to storage (Dynamo files it with the disk).
  ["STORAGE", "disk"],
  ["EXTERNAL", "external"],
  ["NETWORK", "external"],
  ["REMOTE", "external"],
  ["SHARED", "external"],
]);

/**
 * The tier of a medium (`null`: none given), or undefined for a medium Dynamo does not know. Such an
 * event is skipped, not refused: newest Dynamo drops it ("fail closed" rather than filing, say, vLLM
 * 0.26's `FS`/`OBJ` or LMCache's lower-case `cpu` under the device), and refusing it would refuse the
 * whole call and stall the engine's stream behind one event nobody can place.
 */
export function tierOf(medium: string | null): StorageTier | undefined {
  return medium === null ? "device" : TIERS.get(medium);
}
