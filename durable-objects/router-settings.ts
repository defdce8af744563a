/**
 * The router settings a tracker object runs with, read once per isolate from its wrangler vars:
 * Dynamo's `KvRouterConfig` under Dynamo's environment names (`router-config-vars.ts`) and the
 * tracking hash (`tracking-config.ts`). The algorithm's var is `DYN_ROUTER_TRACKING_HASH`, Dynamo's
 * name for it; `ROUTER_TRACKING_HASH` is read when that is unset.
 */

import {
  type TrackingHashConfig,
  type TrackingHashEnv,
  trackingHashOf,
} from "./core/hashing/tracking-config";
import type { KvRouterConfig } from "./core/routing/router-config";
import { kvRouterConfigFromVars, type RouterVars } from "./core/routing/router-config-vars";

export interface RouterEnv extends RouterVars, TrackingHashEnv {
  /** `public-xxh3-v1` or `keyed-xxh3-v1` (Dynamo's `--router-tracking-hash`). */
  DYN_ROUTER_TRACKING_HASH?: string;
}

export interface RouterSettings {
  config: Readonly<KvRouterConfig>;
  /** The tracking hash, or the problem that keeps hashing from tokens refused (Dynamo would not start). */
  tracking: TrackingHashConfig;
}

/** Per env object: the bindings of one isolate do not change while it lives. */
const settingsOf = new WeakMap<object, RouterSettings>();

export function routerSettingsOf(env: RouterEnv): RouterSettings {
  let settings = settingsOf.get(env);
  if (settings) return settings;
  const { config, warnings } = kvRouterConfigFromVars(env);
  const tracking = trackingHashOf({
    ROUTER_TRACKING_HASH: env.DYN_ROUTER_TRACKING_HASH || env.ROUTER_TRACKING_HASH,
    ROUTER_TRACKING_KEY: env.ROUTER_TRACKING_KEY,
    ROUTER_TRACKING_KEY_ID: env.ROUTER_TRACKING_KEY_ID,
  });
  if (!tracking.ok) warnings.push(`router tracking hash: ${tracking.problem}`);
  // One line per isolate for Workers Logs; a bad value keeps its default rather than failing calls.
  for (const warning of warnings) console.warn(JSON.stringify({ level: "warn", msg: warning }));
  settings = { config: Object.freeze(config), tracking };
  settingsOf.set(env, settings);
  return settings;
}
