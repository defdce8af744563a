import { describe, expect, it } from "vitest";
import { HttpError } from "../../src/http/errors";
import { chooseReplica, geoOf, locationHintOf, parseReplicas } from "../../src/http/replica";

describe("parseReplicas", () => {
  it("splits, trims and de-duplicates names", () => {
    expect(parseReplicas(" weur, enam ,weur,,")).toEqual(["weur", "enam"]);
  });

  it("defaults to the single replica primary", () => {
    expect(parseReplicas(undefined)).toEqual(["primary"]);
    expect(parseReplicas(" , ")).toEqual(["primary"]);
  });
});

describe("chooseReplica", () => {
  const all = ["primary", "wnam", "enam", "sam", "weur", "eeur", "apac", "oc", "afr", "me"];

  it("uses the replica named in the header, over the caller's location", () => {
    expect(chooseReplica(all, "oc", { continent: "EU" })).toBe("oc");
  });

  it("answers 400 listing the known replicas for an unknown header value", () => {
    let caught: unknown;
    try {
      chooseReplica(["a", "b"], "x", undefined);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HttpError);
    expect((caught as HttpError).status).toBe(400);
    expect((caught as HttpError).message).toBe('unknown replica "x"; known replicas: a, b');
  });

  it("splits North America at 100°W", () => {
    expect(chooseReplica(all, undefined, { continent: "NA", longitude: "-122.4" })).toBe("wnam");
    expect(chooseReplica(all, undefined, { continent: "NA", longitude: "-74.0" })).toBe("enam");
  });

  it("splits Europe at 20°E", () => {
    expect(chooseReplica(all, undefined, { continent: "EU", longitude: "2.35" })).toBe("weur");
    expect(chooseReplica(all, undefined, { continent: "EU", longitude: "21.0" })).toBe("eeur");
  });

  it("uses the other half of a continent when only one exists", () => {
    expect(chooseReplica(["primary", "enam"], undefined, { continent: "NA", longitude: "-122" })).toBe(
      "enam",
    );
    expect(chooseReplica(["weur"], undefined, { continent: "EU", longitude: "30" })).toBe("weur");
  });

  it("maps the other continents to their hints", () => {
    expect(chooseReplica(all, undefined, { continent: "SA" })).toBe("sam");
    expect(chooseReplica(all, undefined, { continent: "AS", country: "JP" })).toBe("apac");
    expect(chooseReplica(all, undefined, { continent: "OC" })).toBe("oc");
    expect(chooseReplica(all, undefined, { continent: "AF" })).toBe("afr");
  });

  it("sends Middle-East countries to me, or to their continent when there is no me replica", () => {
    expect(chooseReplica(all, undefined, { continent: "AS", country: "AE" })).toBe("me");
    expect(chooseReplica(["primary", "apac"], undefined, { continent: "AS", country: "AE" })).toBe("apac");
  });

  it("falls back to the first replica when no replica is near or cf is absent", () => {
    expect(chooseReplica(["primary", "apac"], undefined, { continent: "EU", longitude: "2" })).toBe(
      "primary",
    );
    expect(chooseReplica(["weur", "apac"], undefined, undefined)).toBe("weur");
    expect(chooseReplica(["weur", "apac"], "  ", { continent: "AN" })).toBe("weur");
  });
});

describe("geoOf and locationHintOf", () => {
  it("reads continent, country and longitude from request.cf and ignores other shapes", () => {
    expect(geoOf({ continent: "EU", country: "DE", longitude: "13.4", colo: "FRA" })).toEqual({
      continent: "EU",
      country: "DE",
      longitude: "13.4",
    });
    expect(geoOf(undefined)).toBeUndefined();
    expect(geoOf({ continent: 5 })).toEqual({
      continent: undefined,
      country: undefined,
      longitude: undefined,
    });
  });

  it("passes only Cloudflare location hint names as hints", () => {
    expect(locationHintOf("weur")).toBe("weur");
    expect(locationHintOf("me")).toBe("me");
    expect(locationHintOf("primary")).toBeUndefined();
    expect(locationHintOf("WEUR")).toBeUndefined();
  });
});
