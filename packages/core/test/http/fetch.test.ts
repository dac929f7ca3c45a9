/** `toFetchHandler`: the core behind a Web-standard `(Request) => Promise<Response>`. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createPartnerApi, signBody, toFetchHandler } from "../../src/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const api = createPartnerApi({ environment: "sandbox", ...loadSandbox() });
const handler = toFetchHandler(api, { clientAddress: () => "198.51.100.4" });
const base = "http://sandbox.test/api/partner";

test("GET through Request/Response", async () => {
  const res = await handler(
    new Request(`${base}/products/usdc-base-prime/yield-calc?amount=1000`, {
      headers: { "X-Api-Key": DEMO.sandboxApiKey },
    }),
  );
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body = (await res.json()) as { data: { principal: string } };
  assert.equal(body.data.principal, "1000");
  assert.ok(res.headers.get("ratelimit"));
});

test("a signed event through Request/Response, then its duplicate", async () => {
  const body = JSON.stringify({
    event_type: "partner.user.kyc_updated",
    occurred_at: "2026-11-20T10:15:00+01:00",
    data: { status: "verified" },
  });
  const init = () => ({
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/json",
      "X-Api-Key": DEMO.sandboxApiKey,
      "X-Partner-Event": "partner.user.kyc_updated",
      "X-Partner-Signature": signBody(DEMO.signingSecret, new TextEncoder().encode(body)),
      "Idempotency-Key": "fetch-1",
    },
  });
  const first = await handler(new Request(`${base}/webhooks/inbound`, init()));
  assert.equal(first.status, 200);
  const again = await handler(new Request(`${base}/webhooks/inbound`, init()));
  assert.deepEqual(await again.json(), { ...((await first.json()) as object), duplicate: true });
});

test("a streamed body over the limit is refused with 413 without reading it all", async () => {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      if (pulled > 1000) controller.close();
      else controller.enqueue(new Uint8Array(16 * 1024));
    },
  });
  const res = await handler(
    new Request(`${base}/webhooks/inbound`, {
      method: "POST",
      body: stream,
      duplex: "half",
      headers: { "Content-Type": "application/json", "X-Api-Key": DEMO.sandboxApiKey },
    } as RequestInit),
  );
  assert.equal(res.status, 413);
  assert.ok(pulled < 20, `pulled ${pulled} chunks`);
});

test("with a basePath, the API answers under it through Request/Response (and says where)", async () => {
  const api = createPartnerApi({ environment: "sandbox", ...loadSandbox(), basePath: "/v1/partner" });
  assert.equal(api.basePath, "/v1/partner");
  assert.equal(createPartnerApi({ environment: "sandbox", ...loadSandbox() }).basePath, "/api/partner");
  const mounted = toFetchHandler(api);
  const res = await mounted(
    new Request("http://sandbox.test/v1/partner/products/usdc-base-prime", {
      headers: { "X-Api-Key": DEMO.sandboxApiKey },
    }),
  );
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { data: { slug: string } }).data.slug, "usdc-base-prime");
  const old = await mounted(new Request("http://sandbox.test/api/partner/products"));
  assert.equal(old.status, 404);
});
