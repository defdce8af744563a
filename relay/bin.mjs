#!/usr/bin/env node
/**
 * `edge-kv-relay` (`npx edge-kv-relay …`, or `npm run relay -- …`): Node 20 cannot run TypeScript,
 * so the relay is bundled with esbuild into node_modules/.cache on each start (a few milliseconds),
 * its packages left to resolve from the repo, and run. The bundle replaces the last one by a rename,
 * so relays starting together each load a whole file.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, "node_modules/.cache/edge-kv-relay");
const outfile = join(dir, "relay.mjs");
const { outputFiles } = await build({
  entryPoints: [join(root, "relay/main.ts")],
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  outfile,
  write: false,
  logLevel: "warning",
});
mkdirSync(dir, { recursive: true });
const staged = join(dir, `relay-${process.pid}.mjs`);
writeFileSync(staged, outputFiles[0].contents);
renameSync(staged, outfile);
await import(pathToFileURL(outfile).href);
