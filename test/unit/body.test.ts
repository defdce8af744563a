import { encode } from "@msgpack/msgpack";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/env";
import { decodeBody, formatOf, readBody, readBytes } from "../../src/wire/body";
import { HttpError, onError } from "../../src/http/errors";
import { acceptsMsgpack, send } from "../../src/wire/respond";
import { object } from "../../src/schema/schema-composites";
import { u64 } from "../../src/schema/schema-scalars";

async function httpError(run: () => unknown): Promise<HttpError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error("no HttpError thrown");
}

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

describe("readBytes", () => {
  it("refuses a declared Content-Length over the cap before reading", async () => {
    const request = new Request("http://x/", {
      method: "POST",
      body: "{}",
      headers: { "content-length": "2097153" },
    });
    const err = await httpError(() => readBytes(request));
    expect(err.status).toBe(413);
    expect(err.message).toBe("request body exceeds 2097152 bytes");
  });

  it("refuses a streamed body that grows past the cap without a Content-Length", async () => {
    const request = new Request("http://x/", {
      method: "POST",
      body: streamOf([new Uint8Array(8), new Uint8Array(8)]),
      duplex: "half",
    } as RequestInit);
    expect((await httpError(() => readBytes(request, 10))).status).toBe(413);
  });

  it("answers 400 when the body stream fails mid-read", async () => {
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(Uint8Array.of(1));
        controller.error(new Error("connection reset"));
      },
    });
    const request = new Request("http://x/", { method: "POST", body: broken, duplex: "half" } as RequestInit);
    const err = await httpError(() => readBytes(request));
    expect([err.status, err.message]).toEqual([400, "could not read the request body"]);
  });

  it("reads a body of declared length in one piece", async () => {
    const request = new Request("http://x/", {
      method: "POST",
      body: Uint8Array.of(1, 2, 3),
      headers: { "content-length": "3" },
    });
    expect([...(await readBytes(request, 3))]).toEqual([1, 2, 3]);
  });

  it("refuses a body past the cap even when its Content-Length understates it", async () => {
    const request = new Request("http://x/", {
      method: "POST",
      body: new Uint8Array(20),
      headers: { "content-length": "5" },
    });
    const err = await httpError(() => readBytes(request, 10));
    expect([err.status, err.message]).toEqual([413, "request body exceeds 2097152 bytes"]);
  });

  it("answers 400 when a body of declared length fails mid-read", async () => {
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(Uint8Array.of(1));
        controller.error(new Error("connection reset"));
      },
    });
    const request = new Request("http://x/", {
      method: "POST",
      body: broken,
      duplex: "half",
      headers: { "content-length": "4" },
    } as RequestInit);
    const err = await httpError(() => readBytes(request));
    expect([err.status, err.message]).toEqual([400, "could not read the request body"]);
  });

  it("joins chunks of a body within the cap", async () => {
    const request = new Request("http://x/", {
      method: "POST",
      body: streamOf([Uint8Array.of(1, 2), Uint8Array.of(3)]),
      duplex: "half",
    } as RequestInit);
    expect([...(await readBytes(request, 3))]).toEqual([1, 2, 3]);
  });
});

describe("formatOf", () => {
  it("accepts JSON with parameters, +json, and both MessagePack names", () => {
    expect(formatOf("application/json; charset=utf-8")).toBe("json");
    expect(formatOf("Application/JSON")).toBe("json");
    expect(formatOf("application/vnd.api+json")).toBe("json");
    expect(formatOf("application/msgpack")).toBe("msgpack");
    expect(formatOf("application/x-msgpack")).toBe("msgpack");
  });

  it("answers 415 naming the unsupported type, or saying it is missing", async () => {
    const other = await httpError(() => formatOf("text/plain; charset=utf-8"));
    expect(other.status).toBe(415);
    expect(other.message).toBe(
      "unsupported content type `text/plain`; send application/json or application/msgpack",
    );
    expect((await httpError(() => formatOf(undefined))).message).toBe(
      "missing content type; send application/json or application/msgpack",
    );
  });
});

describe("decodeBody", () => {
  it("decodes MessagePack 64-bit integers as bigint and small ones as numbers", () => {
    const bytes = encode({ a: 18446744073709551615n, b: 7 }, { useBigInt64: true });
    expect(decodeBody(bytes, "msgpack")).toEqual({ a: 18446744073709551615n, b: 7 });
  });

  it("rejects MessagePack extension types, non-string keys, truncation and trailing bytes as 400", async () => {
    const cases: [number[], string][] = [
      [[0xd4, 0x05, 0x01], "invalid MessagePack body: extension type 5 is not accepted"],
      [[0xd6, 0xff, 0, 0, 0, 0], "invalid MessagePack body: extension type -1 is not accepted"],
      [[0x81, 0x01, 0x02], "invalid MessagePack body: map keys must be strings"],
      [[0x92, 0x01], "invalid MessagePack body: unexpected end of data"],
      [[], "invalid MessagePack body: unexpected end of data"],
      [[0x01, 0x02], "invalid MessagePack body: Extra 1 of 2 byte(s) found at buffer[1]"],
    ];
    for (const [bytes, message] of cases) {
      const err = await httpError(() => decodeBody(Uint8Array.from(bytes), "msgpack"));
      expect([err.status, err.message]).toEqual([400, message]);
    }
  });

  it("rejects JSON that is not UTF-8", async () => {
    const err = await httpError(() => decodeBody(Uint8Array.of(0x22, 0xff, 0x22), "json"));
    expect([err.status, err.message]).toEqual([400, "invalid JSON: body is not valid UTF-8"]);
  });
});

describe("acceptsMsgpack", () => {
  it("picks MessagePack only when Accept names it with non-zero quality", () => {
    expect(acceptsMsgpack("application/msgpack")).toBe(true);
    expect(acceptsMsgpack("application/json, application/x-msgpack;q=0.5")).toBe(true);
    expect(acceptsMsgpack("application/msgpack;q=0")).toBe(false);
    expect(acceptsMsgpack("*/*")).toBe(false);
    expect(acceptsMsgpack(undefined)).toBe(false);
  });
});

describe("a route reading a body", () => {
  const app = new Hono<AppEnv>();
  app.post("/echo", async (c) => send(c, await readBody(c, object({ id: u64() })), 200));
  app.onError(onError);

  const post = (body: BodyInit, headers: Record<string, string>) =>
    app.request("/echo", { method: "POST", body, headers });

  it("answers JSON with the 64-bit value exact", async () => {
    const res = await post('{"id":18446744073709551615}', { "content-type": "application/json" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe('{"id":18446744073709551615}');
  });

  it("answers MessagePack when Accept asks for it, decoding a MessagePack body", async () => {
    const res = await post(encode({ id: 5 }), {
      "content-type": "application/msgpack",
      accept: "application/msgpack",
    });
    expect(res.headers.get("content-type")).toBe("application/msgpack");
    expect([...new Uint8Array(await res.arrayBuffer())]).toEqual([
      ...encode({ id: 5n }, { useBigInt64: true }),
    ]);
  });

  it("answers 400 for malformed JSON, naming the position", async () => {
    const res = await post('{"id" 1}', { "content-type": "application/json" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid JSON at byte 6: expected ':'" });
  });

  it("answers 422 for a mistyped field and 415 for an unsupported type", async () => {
    const mistyped = await post('{"id":1.0}', { "content-type": "application/json" });
    expect(mistyped.status).toBe(422);
    expect(await mistyped.json()).toEqual({ error: "field `id`: expected an unsigned 64-bit integer" });
    const text = await post('{"id":1}', { "content-type": "text/plain" });
    expect(text.status).toBe(415);
  });

  it("answers 413 for a body over 2 MiB", async () => {
    const res = await post(`{"id":1,"pad":"${"x".repeat(2 * 1024 * 1024)}"}`, {
      "content-type": "application/json",
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "request body exceeds 2097152 bytes" });
  });

  it("encodes errors as MessagePack for a client that accepts it", async () => {
    const res = await post("{", { "content-type": "application/json", accept: "application/msgpack" });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/msgpack");
  });
});
