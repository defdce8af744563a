import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JsonFraction, JsonSyntaxError, type JsonValue, parseJson } from "../../src/wire/json";
import { stringifyJson } from "../../src/wire/json-write";

function syntaxError(text: string): JsonSyntaxError {
  try {
    parseJson(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) return err;
    throw err;
  }
  throw new Error(`parsed without error: ${text}`);
}

describe("parseJson numbers", () => {
  it("keeps 2^64-1 exact as a bigint", () => {
    expect(parseJson("18446744073709551615")).toBe(18446744073709551615n);
  });

  it("keeps -2^63 exact as a bigint", () => {
    expect(parseJson("-9223372036854775808")).toBe(-9223372036854775808n);
  });

  it("returns 2^53+1 as a bigint rather than rounding it to 2^53", () => {
    expect(parseJson("9007199254740993")).toBe(9007199254740993n);
  });

  it("returns integers within ±(2^53-1) as numbers, including 16-digit ones", () => {
    expect(parseJson("9007199254740991")).toBe(9007199254740991);
    expect(parseJson("-9007199254740991")).toBe(-9007199254740991);
    expect(parseJson("123456789012345")).toBe(123456789012345);
    expect(parseJson("-42")).toBe(-42);
  });

  it("reads integers longer than 20 digits as numbers rather than costly bigints; none fits 64 bits", () => {
    expect(parseJson("123456789012345678901")).toBe(Number("123456789012345678901"));
    expect(parseJson("9".repeat(400))).toBe(Number.POSITIVE_INFINITY);
  });

  it("reads -0 as the integer 0", () => {
    expect(Object.is(parseJson("-0"), 0)).toBe(true);
  });

  it("marks literals with a fraction or exponent as JsonFraction", () => {
    expect(parseJson("5.0")).toEqual(new JsonFraction(5));
    expect(parseJson("1.5")).toEqual(new JsonFraction(1.5));
    expect(parseJson("2e3")).toEqual(new JsonFraction(2000));
    expect(parseJson("-2.5E-1")).toEqual(new JsonFraction(-0.25));
  });

  it("rejects leading zeros, bare signs, trailing dots and empty exponents", () => {
    expect(syntaxError("01").detail).toBe("leading zeros are not allowed");
    expect(syntaxError("-").detail).toBe("expected a digit");
    expect(syntaxError("1.").detail).toBe("expected a digit");
    expect(syntaxError("1e+").detail).toBe("expected a digit");
    expect(syntaxError("+1").detail).toContain("unexpected character");
  });
});

describe("parseJson structure", () => {
  it("builds objects without a prototype so __proto__ is an ordinary key", () => {
    const parsed = parseJson('{"__proto__": {"polluted": true}}') as Record<string, JsonValue>;
    expect(Object.getPrototypeOf(parsed)).toBeNull();
    expect(Object.keys(parsed)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("rejects a duplicate key, naming it and its position", () => {
    const err = syntaxError('{"x": 1, "x": 2}');
    expect(err.message).toBe('invalid JSON at byte 9: duplicate key "x"');
  });

  it("accepts 64 levels of nesting and rejects 65", () => {
    expect(() => parseJson("[".repeat(64) + "]".repeat(64))).not.toThrow();
    expect(syntaxError("[".repeat(65) + "]".repeat(65)).detail).toBe("nesting deeper than 64 levels");
    expect(syntaxError('{"a":'.repeat(65) + "1" + "}".repeat(65)).detail).toBe(
      "nesting deeper than 64 levels",
    );
  });

  it("accepts the four whitespace characters around every token", () => {
    expect(parseJson(' \t\r\n{ "a" :\n[ 1 ,\t2 ] , "b" : null }\r\n')).toEqual(
      Object.assign(Object.create(null), { a: [1, 2], b: null }),
    );
  });

  it("rejects other whitespace such as a non-breaking space", () => {
    expect(syntaxError("\u00a01").detail).toContain("unexpected character");
  });

  it("rejects trailing garbage after the value", () => {
    expect(syntaxError('{"a":1} x').message).toBe(
      "invalid JSON at byte 8: unexpected data after the JSON value",
    );
    expect(syntaxError("1 2").detail).toBe("unexpected data after the JSON value");
  });

  it("rejects trailing commas, missing colons and truncated input", () => {
    expect(syntaxError("[1,]").detail).toContain("unexpected character");
    expect(syntaxError('{"a" 1}').detail).toBe("expected ':'");
    expect(syntaxError('{"a":1').detail).toBe("unexpected end of input");
    expect(syntaxError("").detail).toBe("unexpected end of input");
    expect(syntaxError("tru").detail).toBe("expected 'true'");
    expect(syntaxError("{1:2}").detail).toBe("expected a string key");
  });

  it("reports positions in UTF-8 bytes, not UTF-16 units", () => {
    // "é" is 2 bytes and "😀" is 4, so the colon is missing at byte 1 + 2 + 4 + 1 + 1 + 1 = 10.
    expect(syntaxError('{"é😀" 1}').offset).toBe(10);
  });
});

/**
 * Array elements that are small unsigned integers take a fast path of their own (token ids); every
 * other element, and every error, must come out exactly as `value()` gives it anywhere else.
 */
describe("parseJson arrays of integers", () => {
  it("reads small unsigned integers, zero and 15-digit ones as numbers", () => {
    expect(parseJson("[1,22,333,128000,0,0,999999999999999]")).toEqual([
      1, 22, 333, 128000, 0, 0, 999999999999999,
    ]);
  });

  it("hands negative numbers, fractions and exponents to the general path", () => {
    const parsed = parseJson("[-1,-0,7,5.0,1e3,2E1,0.5,3,-2.5e-1]") as JsonValue[];
    expect(parsed).toEqual([
      -1,
      0,
      7,
      new JsonFraction(5),
      new JsonFraction(1000),
      new JsonFraction(20),
      new JsonFraction(0.5),
      3,
      new JsonFraction(-0.25),
    ]);
    expect(Object.is(parsed[1], 0)).toBe(true);
  });

  it("keeps integers of 16 to 20 digits exact and reads longer ones as numbers", () => {
    expect(
      parseJson("[9007199254740991,9007199254740993,18446744073709551615,123456789012345678901,4]"),
    ).toEqual([
      9007199254740991,
      9007199254740993n,
      18446744073709551615n,
      Number("123456789012345678901"),
      4,
    ]);
  });

  it("accepts whitespace around elements and separators", () => {
    expect(parseJson("[ 1 , 2,\n3\t,4 ,5, 6\r\n]")).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("reads other values and nested arrays between integers", () => {
    const parsed = parseJson('[1,[2,3],[],4,{"a":5},"x",true,null,[[6]],7]');
    expect(parsed).toEqual([
      1,
      [2, 3],
      [],
      4,
      Object.assign(Object.create(null), { a: 5 }),
      "x",
      true,
      null,
      [[6]],
      7,
    ]);
  });

  it("reports errors in mid-array with the same texts and byte offsets", () => {
    const cases: [string, string][] = [
      ["[1,01]", "invalid JSON at byte 4: leading zeros are not allowed"],
      ["[1,00,2]", "invalid JSON at byte 4: leading zeros are not allowed"],
      ["[1,2.]", "invalid JSON at byte 5: expected a digit"],
      ["[1,2e]", "invalid JSON at byte 5: expected a digit"],
      ["[1,-]", "invalid JSON at byte 4: expected a digit"],
      ["[1,2", "invalid JSON at byte 4: unexpected end of input"],
      ["[1,2,", "invalid JSON at byte 5: unexpected end of input"],
      ["[1,2x]", "invalid JSON at byte 4: expected ',' or ']'"],
      ["[12 3]", "invalid JSON at byte 4: expected ',' or ']'"],
      ["[1,,2]", 'invalid JSON at byte 3: unexpected character ","'],
      ["[1,2,]", 'invalid JSON at byte 5: unexpected character "]"'],
      ['[1,{"a":1,"a":2}]', 'invalid JSON at byte 10: duplicate key "a"'],
      ['["é",1,02]', "invalid JSON at byte 9: leading zeros are not allowed"],
    ];
    for (const [text, message] of cases) expect(syntaxError(text).message, text).toBe(message);
  });

  it("keeps the depth limit for arrays nested inside arrays of integers", () => {
    expect(() => parseJson(`${"[1,".repeat(64)}2${"]".repeat(64)}`)).not.toThrow();
    expect(syntaxError(`${"[1,".repeat(65)}2${"]".repeat(65)}`).detail).toBe("nesting deeper than 64 levels");
  });

  it("reads every number literal in an array as it reads it alone", () => {
    const digits = (min: number, max: number) =>
      fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });
    const literal = fc
      .tuple(
        fc.constantFrom("", "-"),
        fc.oneof(
          fc.constant("0"),
          fc.tuple(fc.constantFrom(..."123456789"), digits(0, 22)).map(([a, b]) => a + b),
        ),
        fc.oneof(
          fc.constant(""),
          digits(1, 3).map((d) => `.${d}`),
        ),
        fc.oneof(
          fc.constant(""),
          fc
            .tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), digits(1, 2))
            .map((p) => p.join("")),
        ),
      )
      .map((parts) => parts.join(""));
    const space = fc.constantFrom("", "", "", " ", "\n", "\t ");
    fc.assert(
      fc.property(fc.array(fc.tuple(literal, space, space), { maxLength: 20 }), (items) => {
        const text = `[${items.map(([item, before, after]) => before + item + after).join(",")}]`;
        expect(parseJson(text)).toEqual(items.map(([item]) => parseJson(item)));
      }),
    );
  });
});

/** A prompt's token ids as a client writes them: long enough for the native path (64+ characters). */
const TOKENS = Array.from({ length: 40 }, (_, i) => (i * 2_654_435_761) % 128_000);
const tokenText = (tokens: readonly number[] = TOKENS) => tokens.join(",");

describe("parseJson long arrays of small integers (read natively)", () => {
  it("reads a prompt's token ids and goes on after the array", () => {
    const text = `{"token_ids":[${tokenText()}],"after":[1,2],"n":18446744073709551615}`;
    expect(parseJson(text)).toEqual(
      Object.assign(Object.create(null), { token_ids: TOKENS, after: [1, 2], n: 18446744073709551615n }),
    );
  });

  it("reads every element exactly as the general path does, whatever follows the first ones", () => {
    const cases: [string, JsonValue[]][] = [
      [`[${tokenText()},9007199254740991]`, [...TOKENS, 9007199254740991]],
      [`[${tokenText()},9007199254740992]`, [...TOKENS, 9007199254740992n]],
      [`[${tokenText()},18446744073709551615]`, [...TOKENS, 18446744073709551615n]],
      [`[${tokenText()},5.0]`, [...TOKENS, new JsonFraction(5)]],
      [`[${tokenText()},1e3]`, [...TOKENS, new JsonFraction(1000)]],
      [`[${tokenText()},-0]`, [...TOKENS, 0]],
      [`[${tokenText()},"a]b",7]`, [...TOKENS, "a]b", 7]],
      [`[${tokenText()},[2],3]`, [...TOKENS, [2], 3]],
      [`[${tokenText()},true,null]`, [...TOKENS, true, null]],
      [`[ ${TOKENS.join(" ,\n\t")}\r\n]`, TOKENS],
    ];
    for (const [text, expected] of cases) {
      const parsed = parseJson(text) as JsonValue[];
      expect(parsed, text).toEqual(expected);
      expect(Object.is(parsed.at(-1), -0), text).toBe(false);
    }
  });

  it("reports errors in long arrays with the texts and byte offsets of the general path", () => {
    const head = `[${tokenText()},`;
    const at = (extra: number) => new TextEncoder().encode(head).length + extra;
    const cases: [string, string][] = [
      [`${head}01]`, `invalid JSON at byte ${at(1)}: leading zeros are not allowed`],
      [`${head}2,]`, `invalid JSON at byte ${at(2)}: unexpected character "]"`],
      [`${head}2\u00a0]`, `invalid JSON at byte ${at(1)}: expected ',' or ']'`],
      [`${head}2`, `invalid JSON at byte ${at(1)}: unexpected end of input`],
      [`${head}{"a":1,"a":2}]`, `invalid JSON at byte ${at(7)}: duplicate key "a"`],
    ];
    for (const [text, message] of cases) expect(syntaxError(text).message, text).toBe(message);
  });

  it("reads long arrays of integers and other literals as it reads each literal alone", () => {
    const small = fc.nat(999_999).map(String);
    const other = fc.constantFrom(
      "-0",
      "-3",
      "2.5",
      "7e2",
      "9007199254740993",
      '"]"',
      "[1]",
      "null",
      "01",
      "1,",
    );
    fc.assert(
      fc.property(
        fc.array(small, { minLength: 12, maxLength: 60 }),
        fc.array(fc.oneof(small, other), { maxLength: 4 }),
        (head, tail) => {
          const text = `[${[...head, ...tail].join(",")}]`;
          let alone: JsonValue[] | Error;
          try {
            alone = [...head, ...tail].map((item) => parseJson(item));
          } catch (err) {
            alone = err as Error;
          }
          if (alone instanceof Error) expect(() => parseJson(text)).toThrow(JsonSyntaxError);
          else expect(parseJson(text)).toEqual(alone);
        },
      ),
    );
  });
});

describe("parseJson strings", () => {
  it("decodes every simple escape", () => {
    expect(parseJson('"\\" \\\\ \\/ \\b \\f \\n \\r \\t"')).toBe('" \\ / \b \f \n \r \t');
  });

  it("decodes \\u escapes including a surrogate pair", () => {
    expect(parseJson('"\\u00e9\\ud83d\\ude00x"')).toBe("é😀x");
  });

  it("rejects unpaired surrogate escapes", () => {
    expect(syntaxError('"\\ud83d"').detail).toBe("unpaired high surrogate in \\u escape");
    expect(syntaxError('"\\ud83d\\u0041"').detail).toBe("unpaired high surrogate in \\u escape");
    expect(syntaxError('"\\ude00"').detail).toBe("unpaired low surrogate in \\u escape");
  });

  it("rejects unknown escapes, short \\u escapes and raw control characters", () => {
    expect(syntaxError('"\\x"').detail).toBe("invalid escape sequence");
    expect(syntaxError('"\\u12"').detail).toBe("invalid \\u escape");
    expect(syntaxError('"a\nb"').detail).toBe("control character in string");
    expect(syntaxError('"a\\n\u0001"').detail).toBe("control character in string");
  });

  it("rejects an unterminated string", () => {
    expect(syntaxError('"abc').detail).toBe("unterminated string");
    expect(syntaxError('"a\\nbc').detail).toBe("unterminated string");
  });
});

describe("stringifyJson", () => {
  it("writes bigint as exact integer literals", () => {
    expect(stringifyJson([18446744073709551615n, -9223372036854775808n, 9007199254740993n])).toBe(
      "[18446744073709551615,-9223372036854775808,9007199254740993]",
    );
  });

  it("skips undefined fields and escapes strings like JSON.stringify", () => {
    expect(stringifyJson({ a: undefined, b: 'q"\n', c: [true, null, 1.5] })).toBe(
      '{"b":"q\\"\\n","c":[true,null,1.5]}',
    );
  });

  it("writes any string exactly as JSON.stringify does, including astral, lone surrogates and controls", () => {
    for (const text of ["plain", "é😀", "\ud800x", "tab\there", 'quote"back\\', "x".repeat(100), "\u2028"]) {
      expect(stringifyJson({ [text]: text })).toBe(JSON.stringify({ [text]: text }));
    }
  });

  it("writes non-finite numbers as null", () => {
    expect(stringifyJson([Number.NaN, Number.POSITIVE_INFINITY])).toBe("[null,null]");
  });

  it("round-trips a body with 64-bit values exactly", () => {
    const text =
      '{"worker_id":18446744073709551615,"model_name":"m é😀","sequence_hashes":[-1,0,9223372036854775807,-9223372036854775808],"x":{"y":[[]]},"f":0.5}';
    expect(stringifyJson(parseJson(text))).toBe(text);
  });
});
