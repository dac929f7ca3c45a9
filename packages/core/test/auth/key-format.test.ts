import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import {
  type ApiKeyFormat,
  type ApiKeyRecord,
  createPartnerApi,
  type EventStore,
  MemoryEventStore,
  MemoryKeyStore,
  type PartnerApi,
  partnerYieldKeyFormat,
  signBody,
} from "../../src/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const encoder = new TextEncoder();
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** A team's registry: keys shaped `fc_test_` / `fc_live_` + 24 alphanumerics, stored as HMAC(pepper, key). */
const PEPPER = encoder.encode("the team's pepper, kept in its secret store");
const peppered: ApiKeyFormat = {
  check(key) {
    const match = /^fc_(test|live)_[A-Za-z0-9]{24}$/.exec(key);
    if (match === null) return { ok: false, code: "malformed", reason: "not an fc_ key" };
    return { ok: true, value: match[1] === "test" ? "sandbox" : "production" };
  },
  hash: (key) => hex(hmac(sha256, PEPPER, encoder.encode(key))),
};
const FC_KEY = "fc_test_abcdefghijklmnopqrstuvwx";
const FC_LIVE_KEY = "fc_live_abcdefghijklmnopqrstuvwx";

/**
 * A registry with salted verifiers: `acme.<id>.<secret>`; the store finds the record by id and the
 * format checks the secret against the record's salted hash (as a bcrypt registry would), async.
 */
interface VerifierRecord extends ApiKeyRecord {
  readonly salt: string;
  readonly verifier: string;
}
const salted = (salt: string, secret: string) => hex(sha256(encoder.encode(`${salt}:${secret}`)));
function verifierFormat(calls: { verify: number }): ApiKeyFormat {
  return {
    check: (key) =>
      /^acme\.[a-z0-9]+\.[A-Za-z0-9]+$/.test(key)
        ? { ok: true, value: undefined }
        : { ok: false, code: "malformed", reason: "not an acme key" },
    hash: (key) => key.split(".")[1]!,
    verify(key, record) {
      calls.verify++;
      const { salt, verifier } = record as VerifierRecord;
      return Promise.resolve(salted(salt, key.split(".")[2]!) === verifier);
    },
  };
}

const get = (api: PartnerApi, key: string | undefined, clientAddress = "192.0.2.20") =>
  api.handle({
    method: "GET",
    path: "/api/partner/products",
    headers: key === undefined ? {} : { "x-api-key": key },
    clientAddress,
  });

const codeOf = (body: unknown) => (JSON.parse(String(body)) as { code: string }).code;

describe("a team's own key format (keyFormat)", () => {
  test("peppered keys of another shape authenticate; ours and malformed ones do not", async () => {
    const data = loadSandbox();
    const keys = new MemoryKeyStore([
      { keyHash: peppered.hash(FC_KEY), partnerId: "northwind", environment: "sandbox", status: "active" },
    ]);
    const api = createPartnerApi({ environment: "sandbox", ...data, keys, keyFormat: peppered });
    assert.equal((await get(api, FC_KEY)).status, 200);
    // Our own key is not of this format: refused before any lookup.
    const ours = await get(api, DEMO.sandboxApiKey);
    assert.equal(ours.status, 401);
    assert.equal(codeOf(ours.body), "invalid_api_key");
    const live = await get(api, FC_LIVE_KEY);
    assert.equal(live.status, 401);
    assert.equal(codeOf(live.body), "wrong_environment");
    const unknown = await get(api, "fc_test_zzzzzzzzzzzzzzzzzzzzzzzz");
    assert.equal(unknown.status, 401);
    assert.equal(codeOf(unknown.body), "invalid_api_key");
    const missing = await get(api, undefined);
    assert.equal(codeOf(missing.body), "missing_api_key");
  });

  test("the store is asked for the format's hash, and a signed event carries it to the store", async () => {
    const data = loadSandbox();
    const asked: string[] = [];
    const store = new MemoryKeyStore([
      { keyHash: peppered.hash(FC_KEY), partnerId: "northwind", environment: "sandbox", status: "active" },
    ]);
    const keys = {
      findByHash: (hash: string) => {
        asked.push(hash);
        return store.findByHash(hash);
      },
      close: () => store.close(),
    };
    const inner = new MemoryEventStore();
    const appended: (string | undefined)[] = [];
    const events: EventStore = {
      append: (event) => {
        appended.push(event.authorizedBy?.keyHash);
        return inner.append(event);
      },
      find: (...args) => inner.find(...args),
      list: (...args) => inner.list(...args),
      close: () => inner.close(),
    };
    const api = createPartnerApi({ environment: "sandbox", ...data, keys, events, keyFormat: peppered });
    const body = '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{}}';
    const answer = await api.handle({
      method: "POST",
      path: "/api/partner/webhooks/inbound",
      headers: {
        "x-api-key": FC_KEY,
        "content-type": "application/json",
        "x-partner-event": "partner.user.created",
        "idempotency-key": "fc-1",
        "x-partner-signature": signBody(DEMO.signingSecret, encoder.encode(body)),
      },
      body: encoder.encode(body),
      clientAddress: "192.0.2.21",
    });
    assert.equal(answer.status, 200, String(answer.body));
    assert.ok(asked.length >= 1);
    assert.ok(asked.every((hash) => hash === peppered.hash(FC_KEY)));
    assert.deepEqual(appended, [peppered.hash(FC_KEY)]);
  });

  test("unknown keys of the team's format count against the failed-authentication limit", async () => {
    const data = loadSandbox();
    const api = createPartnerApi({
      environment: "sandbox",
      ...data,
      keys: new MemoryKeyStore(),
      keyFormat: peppered,
      failedAuthPerMinute: 3,
    });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await get(api, "fc_test_zzzzzzzzzzzzzzzzzzzzzzzz")).status);
    assert.deepEqual(statuses, [401, 401, 401, 429]);
  });

  test("a verifying format: the right secret is served, a wrong one and a revoked key are refused", async () => {
    const data = loadSandbox();
    const calls = { verify: 0 };
    const record: VerifierRecord = {
      keyHash: "k1",
      partnerId: "northwind",
      environment: "sandbox",
      status: "active",
      salt: "s4lt",
      verifier: salted("s4lt", "RightSecret"),
    };
    const keys = new MemoryKeyStore([record]);
    const api = createPartnerApi({ environment: "sandbox", ...data, keys, keyFormat: verifierFormat(calls) });
    assert.equal((await get(api, "acme.k1.RightSecret")).status, 200);
    assert.equal(calls.verify, 1);
    const wrong = await get(api, "acme.k1.WrongSecret");
    assert.equal(wrong.status, 401);
    assert.equal(codeOf(wrong.body), "invalid_api_key");
    assert.equal(calls.verify, 2);
    // The format says nothing of the environment: the record's decides.
    keys.put({ ...record, environment: "production" } as VerifierRecord);
    assert.equal((await get(api, "acme.k1.RightSecret")).status, 401);
    keys.put({ ...record, status: "revoked" } as VerifierRecord);
    const revoked = await get(api, "acme.k1.RightSecret");
    assert.equal(revoked.status, 401);
    assert.equal(calls.verify, 2); // an unusable record is not verified
  });

  test("the default is ours: the same answers as partnerYieldKeyFormat passed explicitly", async () => {
    const implicit = createPartnerApi({ environment: "sandbox", ...loadSandbox() });
    const explicit = createPartnerApi({
      environment: "sandbox",
      ...loadSandbox(),
      keyFormat: partnerYieldKeyFormat(),
    });
    for (const key of [DEMO.sandboxApiKey, DEMO.productionApiKey, "ypk_test_nope", FC_KEY]) {
      const [a, b] = [await get(implicit, key), await get(explicit, key)];
      assert.equal(a.status, b.status, key);
      assert.equal(a.status === 200 ? "ok" : codeOf(a.body), b.status === 200 ? "ok" : codeOf(b.body), key);
    }
    assert.equal((await get(implicit, DEMO.sandboxApiKey)).status, 200);
  });
});
