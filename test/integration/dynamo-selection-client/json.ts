/**
 * JSON as serde_json reads and writes it for the Dynamo client: integers are exact (`bigint`), so a
 * `u64` worker id above 2^53 survives the round trip, and a number with a fraction or an exponent
 * stays a float that no integer field accepts. `JSON.parse` would round the ids before any check ran.
 */

export type Json = null | boolean | string | bigint | number | Json[] | { [key: string]: Json };

/** Parses `text`, integers as `bigint`, every other number as `number`; throws on malformed input. */
export function parseJson(text: string): Json {
  let at = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at offset ${at} of ${JSON.stringify(text.slice(0, 200))}`);
  };
  /** Steps over the closing bracket of `done`. */
  const close = <T>(done: T): T => {
    at++;
    return done;
  };
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at]!)) at++;
  };
  const literal = (word: string, value: Json): Json => {
    if (text.startsWith(word, at)) {
      at += word.length;
      return value;
    }
    return fail("unexpected token");
  };
  const string = (): string => {
    const start = at;
    at++;
    while (at < text.length && text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
    if (at >= text.length) fail("unterminated string");
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const number = (): bigint | number => {
    const match = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(at));
    if (match === null) return fail("bad number");
    at += match[0].length;
    return match[1] === undefined && match[2] === undefined ? BigInt(match[0]) : Number(match[0]);
  };
  const value = (): Json => {
    space();
    const c = text[at];
    if (c === "{") {
      at++;
      const object: { [key: string]: Json } = {};
      space();
      if (text[at] === "}") return close(object);
      for (;;) {
        space();
        if (text[at] !== '"') fail("expected a key");
        const key = string();
        space();
        if (text[at++] !== ":") fail("expected ':'");
        object[key] = value();
        space();
        if (text[at] === ",") at++;
        else if (text[at] === "}") return close(object);
        else fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      at++;
      const array: Json[] = [];
      space();
      if (text[at] === "]") return close(array);
      for (;;) {
        array.push(value());
        space();
        if (text[at] === ",") at++;
        else if (text[at] === "]") return close(array);
        else fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true", true);
    if (c === "f") return literal("false", false);
    if (c === "n") return literal("null", null);
    return number();
  };
  const result = value();
  space();
  if (at !== text.length) fail("trailing characters");
  return result;
}

/** Writes `value` as serde_json does a struct: fields in the given order, `bigint` as bare digits. */
export function writeJson(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map(writeJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const fields = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${writeJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
