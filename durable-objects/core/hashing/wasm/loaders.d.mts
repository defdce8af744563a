import type { Plugin as EsbuildPlugin } from "esbuild";
import type { Plugin as VitePlugin } from "vite";

export const viteWasmModules: VitePlugin;
export const esbuildWasmModules: EsbuildPlugin;
export const miniflareWasmRules: { type: "CompiledWasm"; include: string[] }[];
