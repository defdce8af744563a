/**
 * Types of what travels as JSON, derived from the server-side types, for `hono/client`. A typed
 * client serialises with `JSON.stringify` and parses with `JSON.parse`: neither carries bigint, so
 * 64-bit fields are `number` on that path, exact only up to 2^53 (`src/client/` has the exact path).
 */
import type { Infer } from "../schema/schema";
import type { ObjectSchema, Shape } from "../schema/schema-composites";

/** The JSON form of a value that is `T` on the server. */
export type WireValue<T> = T extends bigint
  ? number
  : T extends BigUint64Array
    ? number[]
    : T extends readonly (infer E)[]
      ? WireValue<E>[]
      : T extends object
        ? { [K in keyof T as undefined extends T[K] ? never : K]: WireValue<T[K]> } & {
            // JSON leaves an undefined field out, and the schemas read a missing one as undefined.
            [K in keyof T as undefined extends T[K] ? K : never]?: WireValue<Exclude<T[K], undefined>>;
          }
        : T;

type OmittableKeys<S extends Shape> = {
  [K in keyof S]: S[K] extends { optional: true } ? K : never;
}[keyof S];

/**
 * The body a client may send for schema `S`: fields with a default or marked optional may be left out,
 * and an alias may stand for its field (only optional fields have aliases: `routing_group`).
 */
export type WireInput<S> =
  S extends ObjectSchema<infer F, infer A>
    ? { [K in Exclude<keyof F, OmittableKeys<F>>]: WireInput<F[K]> } & {
        [K in OmittableKeys<F>]?: WireInput<F[K]>;
      } & { [K in keyof A]?: A[K] extends keyof F ? WireInput<F[A[K]]> : never }
    : WireValue<Exclude<Infer<S>, undefined>>;

/** A query string for schema `S`: the same fields, as text. */
export type QueryInput<S> = { [K in keyof WireInput<S>]: string };
