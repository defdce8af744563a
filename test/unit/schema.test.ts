import { describe, expect, it } from "vitest";
import { JsonFraction, parseJson } from "../../src/wire/json";
import { stringifyJson } from "../../src/wire/json-write";
import { addBody, listingQuery, registerBody } from "../../src/schema/requests";
import { optional, SchemaError, withDefault } from "../../src/schema/schema";
import { array, hashes, object } from "../../src/schema/schema-composites";
import { enumOf, float, string, u32, u64, uint } from "../../src/schema/schema-scalars";

function failure(run: () => unknown): SchemaError {
  try {
    run();
  } catch (err) {
    if (err instanceof SchemaError) return err;
    throw err;
  }
  throw new Error("validated without error");
}

describe("integer kinds", () => {
  it("u32 accepts 0 and 2^32-1 and rejects -1, 2^32, fractions and strings", () => {
    const s = u32();
    expect(s.parse(0, "x")).toBe(0);
    expect(s.parse(4294967295, "x")).toBe(4294967295);
    expect(s.parse(7n, "x")).toBe(7);
    for (const bad of [-1, 4294967296, 4294967296n, 1.5, new JsonFraction(5), "5", null, true]) {
      expect(failure(() => s.parse(bad, "dp_rank")).message).toBe(
        "field `dp_rank`: expected an unsigned 32-bit integer",
      );
    }
  });

  it("u64 returns bigint for numbers and keeps 2^64-1 exact", () => {
    const s = u64();
    expect(s.parse(5, "x")).toBe(5n);
    expect(s.parse(18446744073709551615n, "x")).toBe(18446744073709551615n);
  });

  it("u64 rejects negatives, 2^64, JsonFraction and unsafe floats instead of rounding", () => {
    const s = u64();
    for (const bad of [
      -1,
      -1n,
      18446744073709551616n,
      new JsonFraction(5),
      2 ** 60,
      parseJson("1".repeat(21)),
      "1",
    ]) {
      expect(failure(() => s.parse(bad, "worker_id")).message).toBe(
        "field `worker_id`: expected an unsigned 64-bit integer",
      );
    }
  });

  it("uint accepts safe non-negative integers only", () => {
    const s = uint();
    expect(s.parse(Number.MAX_SAFE_INTEGER, "x")).toBe(Number.MAX_SAFE_INTEGER);
    expect(s.parse(3n, "x")).toBe(3);
    expect(() => s.parse(2n ** 53n, "n")).toThrow(SchemaError);
    expect(() => s.parse(-1, "n")).toThrow(SchemaError);
    expect(() => s.parse(new JsonFraction(1), "n")).toThrow(SchemaError);
  });
});

describe("float", () => {
  it("accepts numbers, bigints and fractions", () => {
    const s = float();
    expect(s.parse(2, "x")).toBe(2);
    expect(s.parse(new JsonFraction(2.5), "x")).toBe(2.5);
    expect(s.parse(3n, "x")).toBe(3);
  });

  it("rejects non-finite values and values under its minimum", () => {
    const s = float({ min: 0 });
    expect(failure(() => s.parse(new JsonFraction(Number.POSITIVE_INFINITY), "d")).message).toBe(
      "field `d`: expected a finite number ≥ 0",
    );
    expect(() => s.parse(new JsonFraction(-0.5), "d")).toThrow(SchemaError);
    expect(() => s.parse("1", "d")).toThrow(SchemaError);
  });
});

describe("string", () => {
  it("bounds length in UTF-8 bytes, not characters", () => {
    const s = string({ minBytes: 1, maxBytes: 4 });
    expect(s.parse("😀", "x")).toBe("😀");
    expect(s.parse("éé", "x")).toBe("éé");
    expect(failure(() => s.parse("ééa", "model_name")).message).toBe(
      "field `model_name`: expected a string of 1..4 UTF-8 bytes",
    );
    expect(() => s.parse("", "x")).toThrow(SchemaError);
    expect(() => s.parse(1, "x")).toThrow(SchemaError);
  });
});

describe("enum, optional, default, array", () => {
  it("enumOf names the allowed values", () => {
    expect(enumOf(["add", "free"]).parse("add", "op")).toBe("add");
    expect(failure(() => enumOf(["add", "free"]).parse("drop", "op")).message).toBe(
      'field `op`: expected one of "add", "free"',
    );
  });

  it("optional and withDefault read a missing or null field as absent", () => {
    const s = object({ a: optional(u32()), b: withDefault(u32(), 9) });
    expect(s.parse(parseJson('{"a":null}'), "")).toEqual({ a: undefined, b: 9 });
    expect(s.parse({ a: 1, b: 2 }, "")).toEqual({ a: 1, b: 2 });
  });

  it("array names the failing element and reports too many items as too large", () => {
    const s = array(u32(), { maxItems: 2 });
    expect(failure(() => s.parse([1, -1], "ops")).message).toBe(
      "field `ops[1]`: expected an unsigned 32-bit integer",
    );
    const big = failure(() => s.parse([1, 2, 3], "ops"));
    expect(big.kind).toBe("too_large");
  });
});

describe("hashes", () => {
  const s = hashes({ maxItems: 65_536 });

  it("stores -1 and 18446744073709551615 as the same u64", () => {
    const out = s.parse([-1, 18446744073709551615n, -9223372036854775808n, 5], "sequence_hashes");
    expect(out).toBeInstanceOf(BigUint64Array);
    expect([...out]).toEqual([18446744073709551615n, 18446744073709551615n, 9223372036854775808n, 5n]);
  });

  it("rejects values outside -2^63..2^64-1 and fractions, naming the element", () => {
    for (const bad of [-9223372036854775809n, 18446744073709551616n, new JsonFraction(1), "1"]) {
      expect(failure(() => s.parse([0, bad], "sequence_hashes")).message).toBe(
        "field `sequence_hashes[1]`: expected a 64-bit integer (-9223372036854775808..18446744073709551615)",
      );
    }
  });

  it("accepts exactly 65,536 hashes and calls 65,537 too large", () => {
    expect(s.parse(new Array(65_536).fill(1), "h").length).toBe(65_536);
    const err = failure(() => s.parse(new Array(65_537).fill(1), "sequence_hashes"));
    expect(err.kind).toBe("too_large");
    expect(err.message).toBe("field `sequence_hashes`: at most 65536 hashes allowed, got 65537");
  });
});

describe("object", () => {
  const body = (json: string) => registerBody.parse(parseJson(json), "");

  it("validates a register body into typed fields, ignoring unknown keys", () => {
    expect(
      body(
        '{"worker_id":18446744073709551615,"model_name":"m","block_size":16,"dp_start":0,"dp_size":2,"extra":[1]}',
      ),
    ).toEqual({
      worker_id: 18446744073709551615n,
      model_name: "m",
      tenant_id: "default",
      block_size: 16,
      dp_start: 0,
      dp_size: 2,
    });
  });

  it("names a missing field", () => {
    expect(failure(() => body('{"model_name":"m","block_size":1,"dp_start":0,"dp_size":1}')).message).toBe(
      "missing field `worker_id`",
    );
  });

  it("rejects a body that is not an object", () => {
    expect(failure(() => body("[1]")).message).toBe("request body: expected an object");
    expect(failure(() => registerBody.parse(new Uint8Array(2), "")).message).toBe(
      "request body: expected an object",
    );
  });

  it("reads routing_group as tenant_id", () => {
    const parsed = body(
      '{"worker_id":1,"model_name":"m","routing_group":"g","block_size":1,"dp_start":0,"dp_size":1}',
    );
    expect(parsed.tenant_id).toBe("g");
  });

  it("accepts tenant_id and routing_group together when they agree", () => {
    const parsed = body(
      '{"worker_id":1,"model_name":"m","tenant_id":"g","routing_group":"g","block_size":1,"dp_start":0,"dp_size":1}',
    );
    expect(parsed.tenant_id).toBe("g");
  });

  it("rejects tenant_id and routing_group that differ as a conflict naming both", () => {
    const err = failure(() =>
      body(
        '{"worker_id":1,"model_name":"m","tenant_id":"a","routing_group":"b","block_size":1,"dp_start":0,"dp_size":1}',
      ),
    );
    expect(err.kind).toBe("conflict");
    expect(err.message).toBe(
      "fields `tenant_id` and `routing_group` are aliases but differ; send one of them",
    );
  });

  it("names the alias when the alias value is invalid", () => {
    expect(failure(() => listingQuery.parse({ routing_group: "" }, "")).message).toBe(
      "field `routing_group`: expected a string of 1..256 UTF-8 bytes",
    );
  });

  it("prefixes nested field paths", () => {
    const s = object({ inner: object({ n: u32() }) });
    expect(failure(() => s.parse({ inner: {} }, "")).message).toBe("missing field `inner.n`");
  });

  it("does not read fields from the prototype of a decoded MessagePack map", () => {
    const s = object({ toString: optional(u32()) });
    expect(s.parse({}, "")).toEqual({ toString: undefined });
  });

  it("parses an /add body with defaults and optional extensions", () => {
    const parsed = addBody.parse(
      parseJson(
        '{"model_name":"m","request_id":"r","worker_id":1,"dp_rank":0,"sequence_hashes":[-1],"expected_prefill_duration_ms":1.5}',
      ),
      "",
    );
    expect(parsed.new_isl_tokens).toBe(0);
    expect(parsed.expected_output_tokens).toBeUndefined();
    expect(parsed.expected_prefill_duration_ms).toBe(1.5);
    expect([...parsed.sequence_hashes]).toEqual([18446744073709551615n]);
  });
});

describe("toJsonSchema", () => {
  it("describes required fields, exact 64-bit bounds and the alias", () => {
    const schema = registerBody.toJsonSchema();
    expect(schema.required).toEqual(["worker_id", "model_name", "block_size", "dp_start", "dp_size"]);
    const text = stringifyJson(schema);
    expect(text).toContain('"worker_id":{"type":"integer","minimum":0,"maximum":18446744073709551615}');
    expect(text).toContain('"routing_group":{');
    expect(text).toContain('"default":"default"');
  });

  it("describes hashes with signed and unsigned bounds and the item cap", () => {
    const text = stringifyJson(hashes({ maxItems: 65_536 }).toJsonSchema());
    expect(text).toContain('"maxItems":65536');
    expect(text).toContain('"minimum":-9223372036854775808,"maximum":18446744073709551615');
  });
});
