/**
 * Reading one Dynamo environment value the way Dynamo's Rust does, so a wrangler var means what the
 * same `DYN_*` variable means to Dynamo.
 */

/**
 * Dynamo's `dynamo_truthy::parse_bool_opt` (crate `dynamo-truthy`, `lib.rs`): trimmed and
 * case-insensitive, `1|true|on|yes` is true and `0|false|off|no` is false. An empty value (a
 * variable declared without one) and any other spelling (`y`, `enabled`, `2`) give `undefined`, so
 * the caller keeps its default.
 */
export function parseDynamoBool(raw: string): boolean | undefined {
  switch (raw.trim().toLowerCase()) {
    case "1":
    case "true":
    case "on":
    case "yes":
      return true;
    case "0":
    case "false":
    case "off":
    case "no":
      return false;
    default:
      return undefined;
  }
}

/**
 * Rust's `str::parse::<f64>` grammar: an optional sign, then digits with an optional point (`1.`,
 * `.5`) and exponent, or `inf`/`infinity`/`nan` in any case. Unlike `Number()` it takes no
 * surrounding whitespace, no hex or binary, no `_`, and never reads `""` as 0.
 */
const RUST_FLOAT = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;

/** The value Rust's `parse::<f64>` gives `raw`, or `undefined` where Rust's parse fails. */
export function parseRustF64(raw: string): number | undefined {
  if (!RUST_FLOAT.test(raw)) return undefined;
  const body = raw.replace(/^[+-]/, "").toLowerCase();
  const negative = raw.startsWith("-");
  if (body === "nan") return Number.NaN;
  if (body === "inf" || body === "infinity") return negative ? -Infinity : Infinity;
  return Number(raw);
}
