/**
 * `src/schema/`: what the routes accept and answer. The DSL (this file) with its scalars and
 * composites, the request and response schemas (`requests.ts`, `responses.ts`) and the middleware
 * that validates with them (`validate.ts`).
 *
 * The request-validation DSL: what a schema is, its error, and the wrappers that make a field
 * optional, defaulted or described. One schema both validates a decoded body (JSON or MessagePack)
 * into a typed value and describes itself as JSON Schema, so the OpenAPI document is generated from
 * the same definitions the routes enforce. The schemas themselves are in `schema-scalars.ts` (numbers,
 * strings, enums) and `schema-composites.ts` (arrays, hash lists, objects, tagged unions).
 */
import type { JsonOutput } from "../wire/json-write";

/** A JSON Schema (2020-12, as used by OpenAPI 3.1) node; bigint bounds are written exactly. */
export type JsonSchema = { readonly [keyword: string]: JsonOutput | undefined };

/**
 * `invalid`: a missing or mistyped field (422). `too_large`: over a size cap (413). `conflict`: a
 * field and its alias disagree (400, as Dynamo answers it).
 */
export type SchemaErrorKind = "invalid" | "too_large" | "conflict";

export class SchemaError extends Error {
  override readonly name = "SchemaError";
  constructor(
    message: string,
    readonly kind: SchemaErrorKind = "invalid",
  ) {
    super(message);
  }
}

export interface Schema<T> {
  /** Whether an object may omit the field (or send `null`, which serde reads as `None`). */
  readonly optional: boolean;
  /** Validates `value` found at `path` (a field path like `ops[2].request_id`; "" is the whole body). */
  parse(value: unknown, path: string): T;
  toJsonSchema(): JsonSchema;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

/** A field a client may leave out (`optional`, `withDefault`); the literal lets types tell them apart. */
export type OmittableSchema<T> = Schema<T> & { readonly optional: true };

/** Throws the "invalid" error for `path` (a field path; "" is the whole body). */
export function invalid(path: string, expected: string): never {
  throw new SchemaError(
    path === "" ? `request body: expected ${expected}` : `field \`${path}\`: expected ${expected}`,
  );
}

/** A schema from its parse function and the JSON Schema it describes itself as. */
export function node<T>(
  parse: (value: unknown, path: string) => T,
  jsonSchema: JsonSchema,
  optional = false,
): Schema<T> {
  return { optional, parse, toJsonSchema: () => jsonSchema };
}

/** Omitted or `null` reads as `undefined`. */
export function optional<T>(schema: Schema<T>): OmittableSchema<T | undefined> {
  return node(
    (value, path) => (value === undefined || value === null ? undefined : schema.parse(value, path)),
    schema.toJsonSchema(),
    true,
  ) as OmittableSchema<T | undefined>;
}

/** Omitted or `null` reads as `fallback`. */
export function withDefault<T extends JsonOutput>(schema: Schema<T>, fallback: T): OmittableSchema<T> {
  return node(
    (value, path) => (value === undefined || value === null ? fallback : schema.parse(value, path)),
    { ...schema.toJsonSchema(), default: fallback },
    true,
  ) as OmittableSchema<T>;
}

export function describe<T>(schema: Schema<T>, description: string): Schema<T> {
  return node(schema.parse, { ...schema.toJsonSchema(), description }, schema.optional);
}
