/**
 * A key or signing secret revoked while an event's body is still arriving refuses that event
 * (CONTRACT §4: a revoked secret is never verified again; a revoked key fails from the next
 * moment it is checked). The key and the partner's secrets are read before the body, then again
 * once it is in; and a store that checks `authorizedBy` with the claim answers `revoked`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type AppendResult,
  createPartnerApi,
  hashApiKey,
  MemoryEventStore,
  type NewEvent,
  type PlainRequest,
} from "../../src/index.js";
import { DEMO, loadSandbox, signedEventRequest } from "../sandbox.js";

/** A signed event whose body arrives when `release()` is called. */
function slowEvent(key: string): { request: PlainRequest; release: () => void; asked: Promise<void> } {
  const body = JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: key },
  });
  const signed = signedEventRequest(body, key);
  const bytes = signed.body as Uint8Array;
  let release = () => {};
  let asked = () => {};
  const wasAsked = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const arrived = new Promise<Uint8Array>((resolve) => {
    release = () => resolve(bytes);
  });
  return {
    request: {
      ...signed,
      body: () => {
        asked();
        return arrived;
      },
    },
    release,
    asked: wasAsked,
  };
}

function setup() {
  const data = loadSandbox();
  const events = new MemoryEventStore();
  const api = createPartnerApi({ environment: "sandbox", ...data, events });
  const partner = data.partnerList.find((p) => p.id === DEMO.partnerId)!;
  const keyHash = hashApiKey(DEMO.sandboxApiKey);
  return { data, events, api, partner, keyHash };
}

describe("revocation while the body arrives (CONTRACT §4, §5)", () => {
  test("a secret revoked while the body arrives: 401 invalid_signature, nothing stored", async () => {
    const { data, events, api, partner } = setup();
    const slow = slowEvent("late-secret");
    const answer = api.handle(slow.request);
    await slow.asked; // authenticated with the secret active: now the body is awaited
    data.partners.put({
      ...partner,
      signingSecrets: partner.signingSecrets.filter((s) => s !== DEMO.signingSecret),
    });
    slow.release();
    const response = await answer;
    assert.equal(response.status, 401, response.body ?? "");
    assert.equal((JSON.parse(response.body!) as { code: string }).code, "invalid_signature");
    assert.equal(await events.find(DEMO.partnerId, "sandbox", "late-secret"), undefined);
  });

  test("a key revoked while the body arrives: 401 invalid_api_key, nothing stored", async () => {
    const { data, events, api, keyHash } = setup();
    const slow = slowEvent("late-key");
    const answer = api.handle(slow.request);
    await slow.asked;
    const record = data.keyRecords.find((k) => k.keyHash === keyHash)!;
    data.keys.put({ ...record, status: "revoked" });
    slow.release();
    const response = await answer;
    assert.equal(response.status, 401, response.body ?? "");
    assert.equal((JSON.parse(response.body!) as { code: string }).code, "invalid_api_key");
    assert.equal(await events.find(DEMO.partnerId, "sandbox", "late-key"), undefined);
  });

  test("a rotation while the body arrives: the other active secret still verifies what it signed", async () => {
    const { data, events, api, partner } = setup();
    const slow = slowEvent("late-rotation");
    const answer = api.handle(slow.request);
    await slow.asked;
    // The demo secret stays; the rotated one is revoked: the event, signed with the demo one, stands.
    data.partners.put({ ...partner, signingSecrets: [DEMO.signingSecret] });
    slow.release();
    const response = await answer;
    assert.equal(response.status, 200, response.body ?? "");
    assert.ok(await events.find(DEMO.partnerId, "sandbox", "late-rotation"));
  });

  test("the store is told the key and the secret that signed; its `revoked` answer is a 401", async () => {
    const { data, keyHash } = setup();
    const seen: NewEvent[] = [];
    for (const [credential, code] of [
      ["api_key", "invalid_api_key"],
      ["signing_secret", "invalid_signature"],
    ] as const) {
      const events = new (class extends MemoryEventStore {
        override append(event: NewEvent): Promise<AppendResult> {
          seen.push(event);
          return Promise.resolve({ status: "revoked", credential });
        }
      })();
      const api = createPartnerApi({ environment: "sandbox", ...data, events });
      const body = JSON.stringify({
        event_type: "partner.user.created",
        occurred_at: "2026-11-20T10:15:00Z",
        data: {},
      });
      const response = await api.handle(signedEventRequest(body, `store-${credential}`));
      assert.equal(response.status, 401);
      assert.equal((JSON.parse(response.body!) as { code: string }).code, code);
    }
    assert.deepEqual(seen[0]!.authorizedBy, { keyHash, signingSecret: DEMO.signingSecret });
  });
});
