import { encode } from "@msgpack/msgpack";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeBody } from "../../src/wire/body";
import { HttpError } from "../../src/http/errors";
import { checkMsgpack } from "../../src/wire/msgpack-check";

const bytes = (...b: number[]) => Uint8Array.from(b);
const str = (text: string) => {
  const utf8 = new TextEncoder().encode(text);
  return [0xa0 | utf8.length, ...utf8];
};

function decodeError(body: Uint8Array): { status: number; message: string } {
  try {
    decodeBody(body, "msgpack");
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, message: err.message };
    throw err;
  }
  throw new Error("decoded");
}

describe("MessagePack bodies the decoder alone would accept", () => {
  it("refuses a string that is not UTF-8, short or long, as a key or a value", () => {
    // Short strings would decode byte by byte to "ÿþ" (the same id as the UTF-8 "ÿþ"); long ones to U+FFFD.
    expect(decodeError(bytes(0x81, ...str("a"), 0xa2, 0xff, 0xfe))).toEqual({
      status: 400,
      message: "invalid MessagePack body: string at byte 4 is not valid UTF-8",
    });
    const long = new Uint8Array(3 + 2 + 3 + 300);
    long.set([0x81, ...str("a"), 0xda, 0x01, 0x2c]);
    long.fill(0x80, 8);
    expect(decodeError(long).message).toMatch(/not valid UTF-8/);
    // A surrogate encoded as UTF-8 (CESU) would become a lone surrogate, which SQLite cannot store.
    expect(decodeError(bytes(0x81, ...str("a"), 0xa3, 0xed, 0xa0, 0x80)).status).toBe(400);
    expect(decodeError(bytes(0x81, 0xa1, 0xc3, 0x01)).message).toMatch(/not valid UTF-8/);
  });

  it("refuses a map that repeats a key, at any depth, as JSON bodies are refused", () => {
    expect(decodeError(bytes(0x82, ...str("a"), 0x01, ...str("a"), 0x02))).toEqual({
      status: 400,
      message: 'invalid MessagePack body: duplicate key "a"',
    });
    const nested = bytes(
      0x81,
      ...str("ops"),
      0x91,
      0x83,
      ...str("op"),
      0x01,
      ...str("x"),
      0xc0,
      ...str("op"),
      0x02,
    );
    expect(decodeError(nested).message).toBe('invalid MessagePack body: duplicate key "op"');
    // The same key in two different maps is fine.
    expect(
      decodeBody(bytes(0x82, ...str("a"), 0x81, ...str("a"), 0x01, ...str("b"), 0x02), "msgpack"),
    ).toEqual({
      a: { a: 1 },
      b: 2,
    });
  });

  it("leaves other malformed input to the decoder and its wording", () => {
    for (const body of [
      bytes(0x82, 0xa1),
      bytes(0xc1),
      bytes(0xdb, 0xff, 0xff),
      bytes(0x92, 0x01),
      bytes(),
    ]) {
      expect(() => checkMsgpack(body)).not.toThrow();
      expect(decodeError(body).status).toBe(400);
    }
  });

  it("accepts every well-formed body with distinct keys and UTF-8 strings", () => {
    const value = fc.letrec((tie) => ({
      any: fc.oneof(
        { depthSize: "small" },
        fc.constant(null),
        fc.boolean(),
        fc.integer(),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
        fc.double({ noNaN: true }),
        fc.string({ unit: "grapheme", maxLength: 300 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.array(tie("any"), { maxLength: 20 }),
        fc.dictionary(fc.string({ maxLength: 40 }), tie("any"), { maxKeys: 20 }),
      ),
    })).any;
    fc.assert(
      fc.property(value, (v) => {
        const encoded = encode(v, { useBigInt64: true });
        expect(() => checkMsgpack(encoded)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
