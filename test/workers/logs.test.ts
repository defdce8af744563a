import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";

/** `exports.default` is typed only when GlobalProps names the main module; at runtime it is a Fetcher. */
const worker = (exports as unknown as { default: Fetcher }).default;

afterEach(() => {
  vi.restoreAllMocks();
});

function post(path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return worker.fetch(
    new Request(`http://x${path}`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", ...headers },
    }),
  );
}

/** The access log lines written while `run` runs, parsed. */
async function accessLines(
  run: () => Promise<unknown>,
): Promise<{ raw: string; line: Record<string, unknown> }[]> {
  const log = vi.spyOn(console, "log");
  await run();
  return log.mock.calls
    .map((args) => String(args[0]))
    .filter((raw) => raw.startsWith('{"level":'))
    .map((raw) => ({ raw, line: JSON.parse(raw) as Record<string, unknown> }));
}

describe("the access log", () => {
  it("writes one JSON line per request with route, method, status, model, tenant, replica and ms", async () => {
    const model = `logs-${crypto.randomUUID()}`;
    const lines = await accessLines(async () => {
      await post(
        "/register",
        `{"worker_id":1,"model_name":"${model}","block_size":4,"dp_start":0,"dp_size":1}`,
      );
      await post(
        "/add",
        `{"model_name":"${model}","routing_group":"acme","request_id":"req-secret-id","worker_id":1,"dp_rank":0,"sequence_hashes":[123456789,987654321]}`,
      );
      await worker.fetch(new Request(`http://x/loads?model_name=${model}`));
    });
    expect(lines.map(({ line }) => ({ ...line, ms: typeof line.ms }))).toEqual([
      {
        level: "info",
        route: "/register",
        method: "POST",
        status: 201,
        model,
        tenant: "default",
        replica: "primary",
        ms: "number",
      },
      // The tracker acme has no worker: the object's 404 is logged with the tenant the body named.
      {
        level: "info",
        route: "/add",
        method: "POST",
        status: 404,
        model,
        tenant: "acme",
        replica: "primary",
        ms: "number",
      },
      { level: "info", route: "/loads", method: "GET", status: 200, model, replica: "primary", ms: "number" },
    ]);
  });

  it("never prints a body, a hash or a bearer token", async () => {
    const model = `logs-${crypto.randomUUID()}`;
    const lines = await accessLines(async () => {
      await post(
        "/register",
        `{"worker_id":1,"model_name":"${model}","block_size":4,"dp_start":0,"dp_size":1}`,
      );
      await post(
        "/add",
        `{"model_name":"${model}","request_id":"req-secret-id","worker_id":1,"dp_rank":0,"sequence_hashes":[123456789,-5]}`,
        { authorization: "Bearer tok-should-not-appear" },
      );
      await post("/potential_loads", `{"model_name":"${model}","sequence_hashes":[555555555]}`);
    });
    expect(lines.map(({ line }) => line.status)).toEqual([201, 201, 200]);
    const text = lines.map(({ raw }) => raw).join("\n");
    for (const secret of [
      "123456789",
      "18446744073709551611",
      "555555555",
      "req-secret-id",
      "tok-should-not-appear",
    ]) {
      expect(text).not.toContain(secret);
    }
    for (const { line } of lines) {
      expect(Object.keys(line).sort()).toEqual([
        "level",
        "method",
        "model",
        "ms",
        "replica",
        "route",
        "status",
        "tenant",
      ]);
    }
  });

  it("logs what the Worker refuses before any route runs: bad input, unknown routes", async () => {
    const lines = await accessLines(async () => {
      await post("/add", "{not json");
      await worker.fetch(new Request("http://x/nowhere"));
    });
    expect(lines.map(({ line }) => [line.route, line.method, line.status, line.model])).toEqual([
      ["/add", "POST", 400, undefined],
      ["/nowhere", "GET", 404, undefined],
    ]);
  });
});
