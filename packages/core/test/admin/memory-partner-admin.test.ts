/**
 * `MemoryPartnerAdmin` behind `createPartnerApi`, as an embedding team wires it: every change a
 * partner manager makes is what the very next request sees. Plus the shared input checks.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  isCredentialId,
  parseEnvironment,
  parseLabel,
  parsePartnerId,
  parsePartnerName,
} from "../../src/admin/admin-input.js";
import {
  createPartnerApi,
  MemoryPartnerAdmin,
  type PlainResponse,
  signBody,
  unwrap,
} from "../../src/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

function apiOver(admin: MemoryPartnerAdmin, environment: "sandbox" | "production") {
  const data = loadSandbox();
  return createPartnerApi({ environment, ...data, keys: admin.keys, partners: admin.partners });
}

async function products(api: ReturnType<typeof apiOver>, key: string): Promise<PlainResponse> {
  return api.handle({
    method: "GET",
    path: "/api/partner/products",
    query: "",
    headers: { "x-api-key": key },
  });
}

function code(response: PlainResponse): string | undefined {
  return (JSON.parse(response.body ?? "{}") as { code?: string }).code;
}

async function sendEvent(
  api: ReturnType<typeof apiOver>,
  key: string,
  secret: string,
): Promise<PlainResponse> {
  const body = JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: crypto.randomUUID() },
  });
  const bytes = new TextEncoder().encode(body);
  return api.handle({
    method: "POST",
    path: "/api/partner/webhooks/inbound",
    query: "",
    headers: {
      "x-api-key": key,
      "content-type": "application/json",
      "x-partner-event": "partner.user.created",
      "x-partner-signature": signBody(secret, bytes),
      "idempotency-key": crypto.randomUUID(),
    },
    body: bytes,
  });
}

describe("MemoryPartnerAdmin behind createPartnerApi", () => {
  test("create, revoke, promote and rotate: each change is what the next request sees", async () => {
    const admin = new MemoryPartnerAdmin();
    const sandbox = apiOver(admin, "sandbox");
    const production = apiOver(admin, "production");
    unwrap(await admin.addPartner({ id: "acme", name: "Acme Wallet" }));

    const key = unwrap(await admin.createKey({ partnerId: "acme", environment: "sandbox" })).apiKey;
    assert.equal((await products(sandbox, key)).status, 200);
    const spare = unwrap(await admin.createKey({ partnerId: "acme", environment: "sandbox" })).apiKey;
    const keyId = unwrap(await admin.listKeys("acme"))[0]!.id;
    unwrap(await admin.revokeKey(keyId));
    const revoked = await products(sandbox, key);
    assert.deepEqual([revoked.status, code(revoked)], [401, "invalid_api_key"]);
    assert.equal((await products(sandbox, spare)).status, 200, "the other key still works");

    assert.equal((await admin.promote("acme")).ok, false, "not verified");
    unwrap(await admin.markPartnerVerified("acme"));
    const live = unwrap(await admin.promote("acme")).apiKey;
    assert.equal((await products(production, live)).status, 200);
    assert.equal(code(await products(sandbox, live)), "wrong_environment");

    const first = unwrap(await admin.createSigningSecret("acme"));
    const second = unwrap(await admin.createSigningSecret("acme"));
    assert.equal((await sendEvent(sandbox, spare, first.signingSecret)).status, 200);
    assert.equal((await sendEvent(sandbox, spare, second.signingSecret)).status, 200);
    unwrap(await admin.revokeSigningSecret("acme", first.summary.id));
    const refused = await sendEvent(sandbox, spare, first.signingSecret);
    assert.deepEqual([refused.status, code(refused)], [401, "invalid_signature"]);
    assert.equal((await sendEvent(sandbox, spare, second.signingSecret)).status, 200);
  });

  test("seeded from the fixtures: the demo key and secret work, and the fixture key is listed without its last four", async () => {
    const data = loadSandbox();
    const admin = new MemoryPartnerAdmin({ partners: data.partnerList, keys: data.keyRecords });
    const api = apiOver(admin, "sandbox");
    assert.equal((await products(api, DEMO.sandboxApiKey)).status, 200);
    assert.equal((await sendEvent(api, DEMO.sandboxApiKey, DEMO.signingSecret)).status, 200);
    const northwind = unwrap(await admin.listKeys("northwind"));
    assert.deepEqual(
      northwind.map((k) => [k.environment, k.status, k.prefix, k.lastFour]),
      [
        ["sandbox", "active", "ypk_test_", null],
        ["sandbox", "revoked", "ypk_test_", null],
        ["production", "active", "ypk_live_", null],
      ],
    );
    assert.equal(unwrap(await admin.getPartner("northwind")).verified, false, "imported unverified");
    unwrap(await admin.revokeKey(northwind[0]!.id));
    assert.equal(code(await products(api, DEMO.sandboxApiKey)), "invalid_api_key");
  });
});

describe("admin input checks", () => {
  test("partner ids, names, environments, labels and credential ids", () => {
    assert.equal(parsePartnerId("north-wind_2").ok, true);
    for (const id of ["", "North", "_x", "a/b", "x".repeat(65)])
      assert.equal(parsePartnerId(id).ok, false, id);
    assert.equal(parsePartnerName("Ça Wallet").ok, true);
    for (const name of ["", " ", "a\u0000b", "a\u007fb", "x".repeat(201)])
      assert.equal(parsePartnerName(name).ok, false, JSON.stringify(name));
    assert.deepEqual(parseEnvironment("sandbox"), { ok: true, value: "sandbox" });
    const live = parseEnvironment("live");
    assert.equal(!live.ok && live.reason, 'the environment is sandbox or production, not "live"');
    const pasted = parseEnvironment(DEMO.sandboxApiKey);
    assert.ok(!pasted.ok && !pasted.reason.includes(DEMO.sandboxApiKey), "a pasted key is not echoed");
    assert.deepEqual(parseLabel(undefined), { ok: true, value: null });
    assert.deepEqual(parseLabel(""), { ok: true, value: null });
    assert.equal(parseLabel("a\tb").ok, false);
    assert.equal(isCredentialId("42"), true);
    for (const id of ["0", "042", "-1", "1.0", "x", "1".repeat(19)])
      assert.equal(isCredentialId(id), false, id);
  });
});
