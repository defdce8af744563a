/**
 * The Worker isolate's own JS heap, read over workerd's DevTools inspector (Miniflare's
 * `inspectorPort`), the user Worker's target. The Durable Objects
 * of this Worker run in that same isolate locally: 2,000 `/add`s of 30 hashes each, kept live, raised
 * its heap by about 1.9 KB each. What counts against production's 128 MB is this heap, not workerd's
 * resident memory, which also holds the local runtime's own per-request state.
 */
import { writeFileSync } from "node:fs";
import WebSocket from "ws";

/** Replies to the proxy's own commands carry ids from 100,000,000 on; ours stay below. */
const OUR_IDS = 100_000_000;

export class Heap {
  /** @param {WebSocket} ws */
  constructor(ws) {
    this.ws = ws;
    this.next = 0;
    /** @type {Map<number, { resolve: (v: any) => void, reject: (e: Error) => void }>} */
    this.pending = new Map();
    ws.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (message.method === "HeapProfiler.addHeapSnapshotChunk") this.chunks?.push(message.params.chunk);
      const waiter = message.id !== undefined && message.id < OUR_IDS && this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error) waiter.reject(new Error(`${message.error.message} (${message.error.code})`));
      else waiter.resolve(message.result);
    });
    ws.on("close", () => {
      for (const waiter of this.pending.values()) waiter.reject(new Error("inspector closed"));
      this.pending.clear();
    });
  }

  /** Connects to the inspector proxy on `port` (127.0.0.1). */
  static async connect(port) {
    const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    // The proxy wants an Origin (or no User-Agent) from a local host.
    // workerd lists each of its workers; the service's isolate is the user worker.
    const target = targets.find((t) => t.id.startsWith("core:user:")) ?? targets[0];
    const ws = new WebSocket(target.webSocketDebuggerUrl, { headers: { Origin: "http://127.0.0.1" } });
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    return new Heap(ws);
  }

  send(method, params = {}, timeoutMs = 30_000) {
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer from the inspector in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /**
   * Used heap bytes after a full collection, so readings compare live objects, not garbage.
   * `poke` sends one request: sent to an idle Worker (wrangler 4.86), `collectGarbage` got no answer
   * for minutes, and one arrived as soon as the Worker served a request, so we keep it busy until then.
   * @param {() => Promise<unknown>} poke
   */
  async live(poke) {
    const collected = this.send("HeapProfiler.collectGarbage");
    const deadline = Date.now() + 30_000;
    let done = false;
    collected.then(
      () => (done = true),
      () => (done = true),
    );
    while (!done && Date.now() < deadline) {
      await poke();
      await Promise.race([collected.catch(() => {}), new Promise((r) => setTimeout(r, 50))]);
    }
    await collected;
    const { usedSize } = await this.send("Runtime.getHeapUsage");
    return usedSize;
  }

  /**
   * A heap snapshot (DevTools' `.heapsnapshot` JSON) written to `path`; `poke` as for `live`.
   * @param {string} path
   * @param {() => Promise<unknown>} poke
   */
  async snapshot(path, poke) {
    this.chunks = [];
    const taken = this.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false }, 300_000);
    let done = false;
    taken.then(
      () => (done = true),
      () => (done = true),
    );
    while (!done) {
      await poke();
      await Promise.race([taken.catch(() => {}), new Promise((r) => setTimeout(r, 200))]);
    }
    await taken;
    writeFileSync(path, this.chunks.join(""));
    this.chunks = undefined;
  }

  close() {
    this.ws.close();
  }
}
