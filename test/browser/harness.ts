/**
 * The browser tests' harness: the real Worker under wrangler's local runtime (as `wrangler dev`, with
 * state in memory), HTTP helpers that keep 64-bit ids exact, and headless Chromium from Debian's
 * package driven by playwright-core. Nothing is downloaded or installed here: `.ci/run` installs
 * Chromium when it is missing.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { unstable_startWorker } from "wrangler";

export const CHROMIUM = "/usr/bin/chromium";

/** Flags for a quiet, offline, throwaway browser: no GPU, no sandbox (CI runs as root), no phoning home. */
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export type Worker = Awaited<ReturnType<typeof unstable_startWorker>>;

export async function startWorker(
  vars: Record<string, string>,
  secrets: Record<string, string>,
): Promise<Worker> {
  const bindings: Record<string, { type: "plain_text" | "secret_text"; value: string }> = {};
  for (const [name, value] of Object.entries(vars)) bindings[name] = { type: "plain_text", value };
  for (const [name, value] of Object.entries(secrets)) bindings[name] = { type: "secret_text", value };
  const worker = await unstable_startWorker({
    config: join(import.meta.dirname, "../../wrangler.toml"),
    bindings,
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: false,
      watch: false,
      logLevel: "warn",
    },
  });
  await worker.ready;
  return worker;
}

/** A JSON call with the body written by hand, so ids above 2^53 stay exact. */
export async function call(
  base: URL,
  token: string,
  method: "GET" | "POST" | "DELETE",
  path: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(new URL(path, base), { method, headers, body });
  return { status: res.status, text: await res.text() };
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile directory, removed on close. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (.ci/run does)`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), "slot-tracker-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1440, height: 900 },
    deviceScaleFactor: 1,
    colorScheme: "dark",
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
