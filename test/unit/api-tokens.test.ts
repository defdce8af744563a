import { describe, expect, it } from "vitest";
import {
  ALL_TENANTS,
  constantTimeEqual,
  grants,
  parseApiTokens,
  sha256,
  TokenTable,
} from "../../src/auth/api-tokens";
import { bearerOf } from "../../src/auth/auth";

describe("parseApiTokens", () => {
  it("reads tenant lists, the all-tenants wildcard, the admin flag and a name", () => {
    const config = parseApiTokens(
      '{"a": {"tenants": ["acme", "globex"]}, "b": {"tenants": ["*"], "admin": true, "name": "ops"}}',
    );
    expect(config).toEqual({
      ok: true,
      tokens: [
        ["a", { tenants: new Set(["acme", "globex"]), admin: false }],
        ["b", { tenants: ALL_TENANTS, admin: true, name: "ops" }],
      ],
    });
  });

  it("fails closed on anything else, naming the entry by position and never quoting its token", () => {
    const cases: [string, string][] = [
      ["{not json", "API_TOKENS is not valid JSON"],
      ["", "API_TOKENS is not valid JSON"],
      ['[["a", ["acme"]]]', "API_TOKENS must be a JSON object mapping each token to its grant"],
      ['{"secret-1": ["acme"]}', 'API_TOKENS entry 1: expected an object like {"tenants": ["acme"]}'],
      ['{"ok": {"tenants": ["x"]}, "secret-2": {"tenants": []}}', 'API_TOKENS entry 2: "tenants" must'],
      ['{"secret-1": {"tenants": ["acme", 7]}}', 'API_TOKENS entry 1: "tenants" must'],
      ['{"secret-1": {"tenants": [""]}}', 'API_TOKENS entry 1: "tenants" must'],
      [
        '{"secret-1": {"tenants": ["acme"], "admin": "yes"}}',
        'API_TOKENS entry 1: "admin" must be true or false',
      ],
      ['{"secret-1": {"tenants": ["acme"], "admins": true}}', 'API_TOKENS entry 1: unknown field "admins"'],
      ['{"secret 1": {"tenants": ["acme"]}}', "API_TOKENS entry 1: a token must be non-empty"],
      ['{"": {"tenants": ["acme"]}}', "API_TOKENS entry 1: a token must be non-empty"],
    ];
    for (const [raw, problem] of cases) {
      const config = parseApiTokens(raw);
      expect(config.ok, raw).toBe(false);
      if (config.ok) continue;
      expect(config.problem.startsWith(problem), `${raw} → ${config.problem}`).toBe(true);
      expect(config.problem).not.toMatch(/secret/);
    }
  });

  it("lets an empty map stand: no token is valid, so every call is refused", () => {
    expect(parseApiTokens("{}")).toEqual({ ok: true, tokens: [] });
  });
});

describe("grants", () => {
  it("covers listed tenants only, or every tenant with the wildcard", () => {
    const acme = { tenants: new Set(["acme"]), admin: false };
    expect([grants(acme, "acme"), grants(acme, "globex"), grants(acme, "default")]).toEqual([
      true,
      false,
      false,
    ]);
    expect(grants({ tenants: ALL_TENANTS, admin: false }, "anything")).toBe(true);
  });
});

describe("constantTimeEqual", () => {
  it("is true exactly for equal bytes", () => {
    const bytes = (...b: number[]) => Uint8Array.from(b);
    expect(constantTimeEqual(bytes(1, 2, 3), bytes(1, 2, 3))).toBe(true);
    expect(constantTimeEqual(bytes(), bytes())).toBe(true);
    expect(constantTimeEqual(bytes(1, 2, 3), bytes(1, 2, 4))).toBe(false);
    expect(constantTimeEqual(bytes(0, 2, 3), bytes(1, 2, 3))).toBe(false);
    expect(constantTimeEqual(bytes(1, 2), bytes(1, 2, 0))).toBe(false);
    expect(constantTimeEqual(bytes(1, 2, 0), bytes(1, 2))).toBe(false);
  });

  it("visits every byte whatever the first difference (no early exit)", () => {
    const reads = (a: Uint8Array, b: Uint8Array) => {
      let count = 0;
      const counting = (bytes: Uint8Array) =>
        new Proxy(bytes, {
          get(target, key) {
            if (typeof key === "string" && /^\d+$/.test(key)) count++;
            return Reflect.get(target, key);
          },
        });
      constantTimeEqual(counting(a), counting(b));
      return count;
    };
    const base = new Uint8Array(32).fill(7);
    const firstDiffers = base.slice();
    firstDiffers[0] = 8;
    const lastDiffers = base.slice();
    lastDiffers[31] = 8;
    expect(reads(base, firstDiffers)).toBe(64);
    expect(reads(base, lastDiffers)).toBe(64);
    expect(reads(base, base.slice())).toBe(64);
  });
});

describe("TokenTable", () => {
  it("finds a token's grant by digest and refuses near misses", async () => {
    const acme = { tenants: new Set(["acme"]), admin: false };
    const ops = { tenants: ALL_TENANTS, admin: true } as const;
    const table = await TokenTable.of([
      ["tok-a", acme],
      ["tok-b", ops],
    ]);
    expect(await table.lookup("tok-a")).toBe(acme);
    expect(await table.lookup("tok-b")).toBe(ops);
    for (const miss of ["tok-", "tok-aa", "TOK-A", "", "tok-c"])
      expect(await table.lookup(miss)).toBeUndefined();
  });

  it("hashes with SHA-256", async () => {
    const hex = [...(await sha256("abc"))].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(hex).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("bearerOf", () => {
  it("takes the token of a Bearer header in any case, and nothing else", () => {
    expect(bearerOf("Bearer abc")).toBe("abc");
    expect(bearerOf("  bearer   abc  ")).toBe("abc");
    expect(bearerOf("BEARER abc")).toBe("abc");
    for (const header of [undefined, "", "Bearer", "Bearer ", "Basic abc", "abc", "Bearer a b"]) {
      expect(bearerOf(header)).toBeUndefined();
    }
  });
});
