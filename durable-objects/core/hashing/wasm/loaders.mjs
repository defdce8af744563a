/**
 * How Node loads a `.wasm` module import, which wrangler and the Workers test pool load as a
 * compiled `WebAssembly.Module`: the same, compiled from the file's bytes (Node allows that; workerd
 * does not). One for Vite (the unit tests) and one for esbuild (the bench's Node bundles), so every
 * environment runs the same module; and the rule a Miniflare of the built bundle needs for them.
 */
/** The module source that stands in for a `.wasm` file at `path`. */
function moduleOf(path) {
  return `import { readFileSync } from "node:fs";\nexport default new WebAssembly.Module(readFileSync(${JSON.stringify(path)}));\n`;
}

/** A Vite plugin: `import compiled from "./x.wasm"` gives the compiled module, as in the Worker. */
export const viteWasmModules = {
  name: "wasm-modules",
  enforce: "pre",
  load(id) {
    const path = id.split("?")[0];
    if (!path.endsWith(".wasm")) return undefined;
    return moduleOf(path);
  },
};

/** The same for esbuild. */
export const esbuildWasmModules = {
  name: "wasm-modules",
  setup(build) {
    build.onLoad({ filter: /\.wasm$/ }, (args) => ({ contents: moduleOf(args.path), loader: "js" }));
  },
};

/** Miniflare's module rule for a wrangler bundle's `.wasm` files: compiled modules, as uploaded. */
export const miniflareWasmRules = [{ type: "CompiledWasm", include: ["**/*.wasm"] }];
