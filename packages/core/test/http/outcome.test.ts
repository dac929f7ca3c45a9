/**
 * The outcome of a request (`ResponseOutcome`): route template, error code, partner, key id and
 * environment ride on the response `handle()` answers, for an adapter's logs, metrics and traces;
 * never a key, never sent.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  createPartnerApi,
  generateApiKey,
  hashApiKey,
  loadFixtures,
  MemoryPartnerAdmin,
  MemoryRateLimiter,
  type PlainRequest,
  type PlainResponse,
} from "../../src/index.js";
import { DEMO, readFixtureFiles } from "../sandbox.js";

function setup(perMinute?: number) {
  const data = loadFixtures(readFixtureFiles());
  const admin = new MemoryPartnerAdmin({ partners: data.partnerList, keys: data.keyRecords });
  const api = createPartnerApi({
    environment: "sandbox",
    ...data,
    keys: admin.keys,
    partners: admin.partners,
    rateLimiter: new MemoryRateLimiter(),
    rateLimitOverride: perMinute,
  });
  return { api, admin };
}

function get(path: string, key?: string): PlainRequest {
  return {
    method: "GET",
    path: `/api/partner${path}`,
    headers: key === undefined ? {} : { "x-api-key": key },
    clientAddress: "198.51.100.9",
  };
}

function outcome(res: PlainResponse) {
  const { route, errorCode, partnerId, keyId, environment } = res;
  return { status: res.status, route, errorCode, partnerId, keyId, environment };
}

describe("the outcome on the response", () => {
  test("a served request names its route template, partner and key id; no error code", async () => {
    const { api, admin } = setup();
    const record = await admin.keys.findByHash(hashApiKey(DEMO.sandboxApiKey));
    const res = await api.handle(get("/products/usdc-base-prime", DEMO.sandboxApiKey));
    assert.deepEqual(outcome(res), {
      status: 200,
      route: "GET /products/{slug}",
      errorCode: undefined,
      partnerId: record!.partnerId,
      keyId: record!.id,
      environment: "sandbox",
    });
    assert.match(record!.id!, /^[1-9][0-9]*$/);
    // HEAD is taken by the GET route.
    const head = await api.handle({ ...get("/products", DEMO.sandboxApiKey), method: "HEAD" });
    assert.equal(head.route, "GET /products");
  });

  test("three different 401s are told apart by code; a known but revoked key still names its partner", async () => {
    const { api } = setup();
    const missing = await api.handle(get("/products"));
    const unknown = await api.handle(get("/products", generateApiKey("sandbox")));
    const wrongEnv = await api.handle(get("/products", generateApiKey("production")));
    const revoked = await api.handle(get("/products", DEMO.revokedSandboxApiKey));
    assert.deepEqual(
      [missing, unknown, wrongEnv].map((r) => [r.status, r.errorCode, r.route, r.partnerId, r.keyId]),
      [
        [401, "missing_api_key", "GET /products", undefined, undefined],
        [401, "invalid_api_key", "GET /products", undefined, undefined],
        [401, "wrong_environment", "GET /products", undefined, undefined],
      ],
    );
    assert.equal(revoked.status, 401);
    assert.equal(revoked.errorCode, "invalid_api_key");
    assert.equal(typeof revoked.partnerId, "string");
    assert.equal(typeof revoked.keyId, "string");
  });

  test("a 429 past the partner's quota carries rate_limited and the partner", async () => {
    const { api } = setup(1);
    await api.handle(get("/products", DEMO.sandboxApiKey));
    const limited = await api.handle(get("/products", DEMO.sandboxApiKey));
    assert.equal(limited.status, 429);
    assert.equal(limited.errorCode, "rate_limited");
    assert.equal(limited.route, "GET /products");
    assert.equal(typeof limited.partnerId, "string");
  });

  test("404 and 405 name no route; their code is there", async () => {
    const { api } = setup();
    const notFound = await api.handle(get("/nothing-here", DEMO.sandboxApiKey));
    const notAllowed = await api.handle({ ...get("/products", DEMO.sandboxApiKey), method: "DELETE" });
    assert.deepEqual(outcome(notFound), {
      status: 404,
      route: undefined,
      errorCode: "not_found",
      partnerId: undefined,
      keyId: undefined,
      environment: "sandbox",
    });
    assert.equal(notAllowed.errorCode, "method_not_allowed");
    assert.equal(notAllowed.route, undefined);
  });

  test("a key from fixtures alone (no stored id) names its partner, no key id", async () => {
    const data = loadFixtures(readFixtureFiles());
    const api = createPartnerApi({ environment: "sandbox", ...data });
    const res = await api.handle(get("/products", DEMO.sandboxApiKey));
    assert.equal(res.status, 200);
    assert.equal(typeof res.partnerId, "string");
    assert.equal(res.keyId, undefined);
  });
});
