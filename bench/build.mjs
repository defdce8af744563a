/**
 * The one esbuild configuration of the benchmark's TypeScript parts (Node 20 cannot strip types):
 * `npm run bench` and the parts' standalone scripts bundle through it, into one directory inside
 * node_modules, so that the bundles' external packages resolve from the repo.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { esbuildWasmModules } from "../durable-objects/core/hashing/wasm/loaders.mjs";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const out = join(root, "node_modules/.cache/slot-tracker-bench");

/** Bundles `entryPoints` (name → path from the repo root); each lands at `join(out, name + ".mjs")`. */
export async function bundle(entryPoints) {
  await build({
    entryPoints,
    absWorkingDir: root,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outdir: out,
    outExtension: { ".js": ".mjs" },
    logLevel: "warning",
    plugins: [esbuildWasmModules],
  });
}
