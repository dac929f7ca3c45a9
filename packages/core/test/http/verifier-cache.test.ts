/**
 * The signature verifiers are cached per list of secrets, and the list is read from the partner
 * store on every request: a secret removed from the list stops verifying on the very next request,
 * and no two lists can share a cached verifier.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createPartnerApi, type Partner, type PlainResponse, signBody } from "../../src/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

/** A partner store whose answer the test changes between requests. */
function apiWithSecrets(initial: readonly string[]) {
  const data = loadSandbox();
  let secrets = initial;
  const api = createPartnerApi({
    environment: "sandbox",
    ...data,
    partners: {
      getPartner: async (id) => {
        const partner = await data.partners.getPartner(id);
        return partner === undefined
          ? undefined
          : ({ ...partner, signingSecrets: secrets } satisfies Partner);
      },
      close: async () => {},
    },
  });
  return { api, setSecrets: (next: readonly string[]) => (secrets = next) };
}

async function signedWith(api: ReturnType<typeof createPartnerApi>, secret: string): Promise<PlainResponse> {
  const key = crypto.randomUUID();
  const body = new TextEncoder().encode(
    JSON.stringify({
      event_type: "partner.user.created",
      occurred_at: "2026-11-20T10:15:00Z",
      data: { id: key },
    }),
  );
  return api.handle({
    method: "POST",
    path: "/api/partner/webhooks/inbound",
    query: "",
    headers: {
      "x-api-key": DEMO.sandboxApiKey,
      "content-type": "application/json",
      "x-partner-event": "partner.user.created",
      "x-partner-signature": signBody(secret, body),
      "idempotency-key": key,
    },
    body,
  });
}

test("a secret dropped from the partner's list stops verifying on the next request; one added verifies at once", async () => {
  const [a, b] = [DEMO.signingSecret, DEMO.rotatedSigningSecret];
  const { api, setSecrets } = apiWithSecrets([a, b]);
  assert.equal((await signedWith(api, a)).status, 200);
  assert.equal((await signedWith(api, b)).status, 200);
  setSecrets([b]);
  assert.equal((await signedWith(api, a)).status, 401);
  assert.equal((await signedWith(api, b)).status, 200);
  setSecrets([b, a]);
  assert.equal((await signedWith(api, a)).status, 200);
});

test("two lists never share a cached verifier, whatever characters their secrets hold", async () => {
  // Joined with a newline, ["a", "b"] and ["a\nb"] would be one cache entry: the second list would
  // then accept a signature made with "a", which is none of its secrets.
  const { api, setSecrets } = apiWithSecrets(["a", "b"]);
  assert.equal((await signedWith(api, "a")).status, 200);
  setSecrets(["a\nb"]);
  assert.equal((await signedWith(api, "a")).status, 401);
  assert.equal((await signedWith(api, "a\nb")).status, 200);
});

test("a store that hands the same list object again, changed in place, is read as it is now", async () => {
  // The cheaper lookup by the list object itself must not trust the object: a store may revoke by
  // editing its array (splice, assignment) and hand the same array on the next request.
  const [a, b] = [DEMO.signingSecret, DEMO.rotatedSigningSecret];
  const list = [a, b];
  const { api } = apiWithSecrets(list);
  assert.equal((await signedWith(api, a)).status, 200);
  list.splice(0, 1); // a revoked
  assert.equal((await signedWith(api, a)).status, 401);
  assert.equal((await signedWith(api, b)).status, 200);
  list[0] = a; // b replaced by a: same length, same object
  assert.equal((await signedWith(api, b)).status, 401);
  assert.equal((await signedWith(api, a)).status, 200);
  list.push(b);
  assert.equal((await signedWith(api, b)).status, 200);
});
