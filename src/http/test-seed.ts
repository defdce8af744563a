/**
 * The `x-slot-tracker-seed` header, which seeds a choosing call's random draws (`/route`,
 * `/selection/select`, `/selection/select_and_reserve`). Honoured only where `ALLOW_TEST_SEED` is
 * "1" (the test config): production never runs seeded.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { HttpError } from "./errors";

const SEED_HEADER = "x-slot-tracker-seed";

/** The seed header as a u32, refused (400) where seeding is not allowed: production never runs seeded. */
export function seedOf(c: Context<AppEnv>): { seed?: number } {
  const raw = c.req.header(SEED_HEADER);
  if (raw === undefined) return {};
  if (c.env.ALLOW_TEST_SEED !== "1") {
    throw new HttpError(400, `header \`${SEED_HEADER}\` is accepted only when ALLOW_TEST_SEED is "1"`);
  }
  const seed = Number(raw);
  if (!/^\d{1,10}$/.test(raw.trim()) || seed > 0xffff_ffff) {
    throw new HttpError(400, `header \`${SEED_HEADER}\`: expected an unsigned 32-bit integer`);
  }
  return { seed };
}
