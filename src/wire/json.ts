/**
 * Exact JSON parsing for the wire. `JSON.parse` rounds integers above 2^53 (worker ids and prompt
 * hashes are full 64-bit values) and cannot tell `5` from `5.0`. This parser keeps integer literals
 * exact and marks non-integer ones; `json-write.ts` is its counterpart for answers.
 */

/** A JSON number written with a fraction or exponent: valid for float fields, never for integers. */
export class JsonFraction {
  constructor(readonly value: number) {}
}

export class JsonSyntaxError extends Error {
  override readonly name = "JsonSyntaxError";
  constructor(
    readonly detail: string,
    /** UTF-8 byte offset of the problem in the body. */
    readonly offset: number,
  ) {
    super(`invalid JSON at byte ${offset}: ${detail}`);
  }
}

export type JsonValue = null | boolean | number | bigint | string | JsonFraction | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Deeper nesting is refused: no wire body needs more than 3 levels, and recursion must stay bounded. */
export const MAX_JSON_DEPTH = 64;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;
/** Integer literals of at most this many digits are below 2^53 and can be accumulated as numbers. */
const SAFE_DIGITS = 15;
/**
 * 2^64 − 1 has 20 digits, so a longer literal fits no 64-bit field. It is read as a (rounded)
 * number, which every integer kind rejects, because BigInt parsing is superlinear: a 2 MiB literal
 * would cost hundreds of milliseconds of CPU.
 */
const MAX_EXACT_DIGITS = 20;

/** Arrays spanning fewer characters than this, brackets included, are read by the general path. */
const MIN_NATIVE_ARRAY = 64;
/** What any number but an unsigned integer literal is written with: a fraction, an exponent, a sign. */
const NOT_UNSIGNED_INTEGER = [".", "e", "E", "-"];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/**
 * Parses one RFC 8259 JSON text. Integers beyond ±(2^53−1) become bigint (up to 20 digits; see
 * {@link MAX_EXACT_DIGITS}), literals with a fraction or exponent {@link JsonFraction}.
 */
export function parseJson(text: string): JsonValue {
  const parser = new Parser(text);
  parser.skipSpace();
  const value = parser.value(0);
  parser.skipSpace();
  if (parser.pos < text.length) parser.fail("unexpected data after the JSON value");
  return value;
}

class Parser {
  pos = 0;
  constructor(private readonly text: string) {}

  fail(detail: string, at = this.pos): never {
    throw new JsonSyntaxError(detail, new TextEncoder().encode(this.text.slice(0, at)).length);
  }

  skipSpace(): void {
    const text = this.text;
    let pos = this.pos;
    while (isSpace(text.charCodeAt(pos))) pos++;
    this.pos = pos;
  }

  value(depth: number): JsonValue {
    const c = this.text.charCodeAt(this.pos);
    if (c === QUOTE) return this.string();
    if (c === MINUS || (c >= ZERO && c <= NINE)) return this.number();
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    if (c === 0x74) return this.literal("true", true);
    if (c === 0x66) return this.literal("false", false);
    if (c === 0x6e) return this.literal("null", null);
    if (Number.isNaN(c)) this.fail("unexpected end of input");
    return this.fail(`unexpected character ${JSON.stringify(this.text.charAt(this.pos))}`);
  }

  private literal<T extends JsonValue>(word: string, result: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail(`expected '${word}'`);
    this.pos += word.length;
    return result;
  }

  private expect(code: number, what: string): void {
    if (this.text.charCodeAt(this.pos) !== code) {
      this.fail(
        this.pos >= this.text.length ? `unexpected end of input, expected ${what}` : `expected ${what}`,
      );
    }
    this.pos++;
  }

  private object(depth: number): JsonObject {
    if (depth > MAX_JSON_DEPTH) this.fail(`nesting deeper than ${MAX_JSON_DEPTH} levels`);
    this.pos++;
    // No prototype: a `__proto__` key is an ordinary own field and cannot reach Object.prototype.
    const result: JsonObject = Object.create(null);
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return result;
    }
    for (;;) {
      const keyAt = this.pos;
      if (this.text.charCodeAt(keyAt) !== QUOTE) this.expect(QUOTE, "a string key");
      const key = this.string();
      this.skipSpace();
      this.expect(COLON, "':'");
      this.skipSpace();
      const item = this.value(depth);
      if (key in result) this.fail(`duplicate key ${JSON.stringify(key)}`, keyAt);
      result[key] = item;
      this.skipSpace();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === 0x7d) return result;
      if (c !== COMMA)
        this.fail(Number.isNaN(c) ? "unexpected end of input" : "expected ',' or '}'", this.pos - 1);
      this.skipSpace();
    }
  }

  private array(depth: number): JsonValue[] {
    if (depth > MAX_JSON_DEPTH) this.fail(`nesting deeper than ${MAX_JSON_DEPTH} levels`);
    const integers = this.integerArray();
    if (integers) return integers;
    this.pos++;
    const result: JsonValue[] = [];
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return result;
    }
    const text = this.text;
    for (;;) {
      const small = this.smallInteger();
      if (small >= 0) {
        result.push(small);
        // The common separator, a bare comma before the next token id, without the general path.
        const next = text.charCodeAt(this.pos + 1);
        if (text.charCodeAt(this.pos) === COMMA && next > ZERO && next <= NINE) {
          this.pos++;
          continue;
        }
      } else {
        result.push(this.value(depth));
      }
      this.skipSpace();
      const c = text.charCodeAt(this.pos);
      this.pos++;
      if (c === 0x5d) return result;
      if (c !== COMMA)
        this.fail(Number.isNaN(c) ? "unexpected end of input" : "expected ',' or ']'", this.pos - 1);
      this.skipSpace();
    }
  }

  /**
   * A long array of small unsigned integer literals (a prompt's token ids) read by `JSON.parse`,
   * and `pos` moved past it; null, `pos` unmoved, for any other array, which the general path reads.
   * The selection bench's 2,048-token body takes 32 µs instead of 64 µs this way (Node 20). Its
   * answer is the one the general path would give:
   * - the array ends at its first `]`, so a parse that succeeds ended exactly there (a nested array
   *   or a string holding `]` leaves the slice unbalanced, and the parse fails);
   * - an array with `.`, `e`, `E` or `-` anywhere is left alone, and an element that is not a safe
   *   integer (a string, an object, a literal) sends the array to the general path, so every element
   *   taken here was an unsigned integer literal without a fraction or exponent (which `JsonFraction`
   *   must mark) or a sign (`-0` is 0 on the general path);
   * - an element at or above 2^53, which `JSON.parse` rounds, is not a safe integer, and sends the
   *   array to the exact path. A safe integer is a number there too.
   * Arrays whose first element has more than {@link SAFE_DIGITS} digits (64-bit hashes) or that are
   * short are not tried: there the attempt would cost more than it saves.
   */
  private integerArray(): number[] | null {
    const text = this.text;
    const open = this.pos;
    let first = open + 1;
    while (isSpace(text.charCodeAt(first))) first++;
    let digits = first;
    for (let c = text.charCodeAt(digits); c >= ZERO && c <= NINE; c = text.charCodeAt(++digits));
    if (digits === first || digits - first > SAFE_DIGITS) return null;
    const close = text.indexOf("]", digits);
    if (close - open < MIN_NATIVE_ARRAY) return null;
    const slice = text.slice(open, close + 1);
    for (const mark of NOT_UNSIGNED_INTEGER) if (slice.includes(mark)) return null;
    let values: unknown[];
    try {
      values = JSON.parse(slice) as unknown[];
    } catch {
      return null;
    }
    for (let i = 0; i < values.length; i++) if (!Number.isSafeInteger(values[i])) return null;
    this.pos = close + 1;
    return values as number[];
  }

  /**
   * The fast path of array elements, which are mostly token ids: an unsigned integer of at most
   * {@link SAFE_DIGITS} digits with no fraction or exponent is read here and `pos` moved past it.
   * Anything else answers -1 with `pos` unmoved, and `value()` reads it (or reports its error) as it
   * would anywhere. `value()` and `number()` pay for signs, fractions and bigints on every element:
   * skipping them took a third off the parse of the selection bench's 2,048-token body (Node 20,
   * about 190 → 125 µs).
   */
  private smallInteger(): number {
    const text = this.text;
    const start = this.pos;
    let c = text.charCodeAt(start);
    if (c < ZERO || c > NINE) return -1;
    let pos = start;
    let accumulated = 0;
    do {
      accumulated = accumulated * 10 + (c - ZERO);
      c = text.charCodeAt(++pos);
    } while (c >= ZERO && c <= NINE);
    if (c === DOT || c === 0x65 || c === 0x45 || pos - start > SAFE_DIGITS) return -1;
    // A leading zero: `value()` refuses it at the offset it always has.
    if (text.charCodeAt(start) === ZERO && pos - start > 1) return -1;
    this.pos = pos;
    return accumulated;
  }

  private number(): number | bigint | JsonFraction {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    const negative = text.charCodeAt(pos) === MINUS;
    if (negative) pos++;
    const digitsStart = pos;
    let c = text.charCodeAt(pos);
    let accumulated = 0;
    if (c === ZERO) {
      pos++;
      c = text.charCodeAt(pos);
      if (c >= ZERO && c <= NINE) this.fail("leading zeros are not allowed", pos);
    } else if (c > ZERO && c <= NINE) {
      do {
        accumulated = accumulated * 10 + (c - ZERO);
        c = text.charCodeAt(++pos);
      } while (c >= ZERO && c <= NINE);
    } else {
      this.fail("expected a digit", pos);
    }
    const digits = pos - digitsStart;
    let fractional = false;
    if (c === DOT) {
      fractional = true;
      pos = this.digits(pos + 1);
      c = text.charCodeAt(pos);
    }
    if (c === 0x65 || c === 0x45) {
      fractional = true;
      c = text.charCodeAt(++pos);
      if (c === PLUS || c === MINUS) pos++;
      pos = this.digits(pos);
    }
    this.pos = pos;
    if (fractional) return new JsonFraction(Number(text.slice(start, pos)));
    if (digits <= SAFE_DIGITS) return negative ? (accumulated === 0 ? 0 : -accumulated) : accumulated;
    if (digits > MAX_EXACT_DIGITS) return Number(text.slice(start, pos));
    const big = BigInt(text.slice(start, pos));
    return big >= MIN_SAFE && big <= MAX_SAFE ? Number(big) : big;
  }

  private digits(from: number): number {
    let pos = from;
    let c = this.text.charCodeAt(pos);
    if (!(c >= ZERO && c <= NINE)) this.fail("expected a digit", pos);
    do c = this.text.charCodeAt(++pos);
    while (c >= ZERO && c <= NINE);
    return pos;
  }

  private string(): string {
    const text = this.text;
    const start = ++this.pos;
    let pos = start;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === QUOTE) {
        this.pos = pos + 1;
        return text.slice(start, pos);
      }
      if (c === BACKSLASH) return this.escapedString(start, pos);
      if (c < 0x20) this.fail("control character in string", pos);
      if (Number.isNaN(c)) this.fail("unterminated string", pos);
      pos++;
    }
  }

  /** The slow path, taken from the first backslash on. */
  private escapedString(start: number, firstEscape: number): string {
    const text = this.text;
    let out = text.slice(start, firstEscape);
    let pos = firstEscape;
    let chunk = pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === QUOTE) {
        this.pos = pos + 1;
        return out + text.slice(chunk, pos);
      }
      if (Number.isNaN(c)) this.fail("unterminated string", pos);
      if (c < 0x20) this.fail("control character in string", pos);
      if (c !== BACKSLASH) {
        pos++;
        continue;
      }
      out += text.slice(chunk, pos);
      const kind = text.charAt(pos + 1);
      if (kind === "u") {
        const unit = this.hex4(pos + 2);
        pos += 6;
        if (unit >= 0xdc00 && unit <= 0xdfff) this.fail("unpaired low surrogate in \\u escape", pos - 6);
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // JSON escapes UTF-16, so a code point above U+FFFF must arrive as a complete pair.
          const low = text.startsWith("\\u", pos) ? this.hex4(pos + 2) : -1;
          if (low < 0xdc00 || low > 0xdfff) this.fail("unpaired high surrogate in \\u escape", pos - 6);
          out += String.fromCharCode(unit, low);
          pos += 6;
        } else {
          out += String.fromCharCode(unit);
        }
      } else {
        const replacement = ESCAPES[kind];
        if (replacement === undefined) this.fail("invalid escape sequence", pos);
        out += replacement;
        pos += 2;
      }
      chunk = pos;
    }
  }

  private hex4(at: number): number {
    const digits = this.text.slice(at, at + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(digits)) this.fail("invalid \\u escape", at - 2);
    return Number.parseInt(digits, 16);
  }
}

/** JSON's four whitespace characters: space, line feed, carriage return, tab. */
function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}
