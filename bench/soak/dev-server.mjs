/**
 * The soak's runtime (`runtime.mjs`: the wrangler bundle in Miniflare's workerd): a child process
 * group on 127.0.0.1 with a fresh persistence directory, its output kept in a log file, the workerd
 * process found among its descendants so its memory can be sampled from /proc, and workerd's
 * DevTools inspector port through which `heap.mjs` reads the Worker isolate's heap.
 */
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Parent pid and command name of every process, from /proc. */
function processTable() {
  const table = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command is in parentheses and may contain spaces; the fields after it are fixed.
      const close = stat.lastIndexOf(")");
      const name = stat.slice(stat.indexOf("(") + 1, close);
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      table.set(Number(entry), { ppid, name });
    } catch {
      // The process ended while we looked.
    }
  }
  return table;
}

/** The pid of the first `workerd` descending from `root`, or undefined. */
export function findWorkerd(root) {
  const table = processTable();
  for (const [pid, { name }] of table) {
    if (!name.startsWith("workerd")) continue;
    for (let p = table.get(pid)?.ppid; p !== undefined && p > 1; p = table.get(p)?.ppid) {
      if (p === root) return pid;
    }
  }
  return undefined;
}

/** Resident memory of `pid`, bytes (VmRSS), or undefined once it has exited. */
export function rssOf(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts the runtime with `vars` and waits until `/health` answers; `stop()` ends the process group.
 * @param {string} root the project directory
 * @param {Record<string, string>} vars
 */
export async function startDev(root, vars) {
  const port = await freePort();
  const inspectorPort = await freePort();
  const persist = mkdtempSync(join(tmpdir(), "slot-tracker-soak-"));
  const logPath = join(persist, "runtime.log");
  const log = createWriteStream(logPath);
  // The runtime is Miniflare, not `wrangler dev`: see runtime.mjs for why.
  const args = [
    join(root, "bench/soak/runtime.mjs"),
    String(port),
    String(inspectorPort),
    persist,
    JSON.stringify(vars),
  ];
  const child = spawn(process.execPath, args, {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  let exited = false;
  child.on("exit", () => {
    exited = true;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exited) throw new Error(`the runtime exited during start-up; see ${logPath}`);
    try {
      if ((await fetch(`${url}/health`)).status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline)
      throw new Error(`the runtime did not answer /health within 120 s; see ${logPath}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    url,
    persist,
    logPath,
    pid: child.pid,
    inspectorPort,
    alive: () => !exited,
    async stop() {
      if (exited) return;
      const gone = new Promise((resolve) => child.on("exit", resolve));
      process.kill(-child.pid, "SIGTERM");
      const timer = setTimeout(() => {
        if (!exited) process.kill(-child.pid, "SIGKILL");
      }, 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
