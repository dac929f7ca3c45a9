/**
 * The example partner's credentials, published on purpose (sandbox only; examples/README.md): the
 * data files hold only the key's SHA-256. And the requests every example must answer alike.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";

export const ACME = {
  sandboxApiKey: "ypk_test_3EvUmIpjyOVHMyGUnPxVlclCdXHdnLvn3Svwz8",
  signingSecret: "whsec_D9YoqtcxEzxXBtJinld61UDiBI7PLM4k",
  slug: "acme-usdc-base",
  holder: "0xB2AcA8a06cB46B0Fea1895BdF9472c8eE17190ba",
} as const;

/** Sends one request to the mounted API; `from` is the client address the platform reports, where a test can set it. */
export type Send = (path: string, init?: RequestInit) => Promise<Response>;

/** HMAC-SHA256 of the raw body, hex: computed here with node:crypto, not by the code under test. */
function sign(body: string): string {
  return createHmac("sha256", ACME.signingSecret).update(body, "utf8").digest("hex");
}

export async function yieldCalcAnswers(send: Send): Promise<void> {
  const res = await send(`/api/partner/products/${ACME.slug}/yield-calc?amount=1000`, {
    headers: { "x-api-key": ACME.sandboxApiKey },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  assert.match(res.headers.get("ratelimit") ?? "", /^"sandbox";r=\d+;t=\d+$/);
  // 0.0481 × (10000 − 50 − 150) / 10000 = 0.047138; 1000 × that = 47.138 USDC a year.
  assert.deepEqual(await res.json(), {
    success: true,
    data: {
      principal: "1000",
      annual_yield: "47.138",
      monthly_yield: "3.84577",
      net_apy_for_user: "0.047138",
    },
  });
}

export async function positionAnswers(send: Send): Promise<void> {
  const res = await send(`/api/partner/products/${ACME.slug}/position?address=${ACME.holder.toLowerCase()}`, {
    headers: { "x-api-key": ACME.sandboxApiKey },
  });
  assert.equal(res.status, 200);
  const { data } = (await res.json()) as { data: Record<string, unknown> };
  // 1200 shares of a vault holding 2.5 M USDC against 2.4 M shares: 1250 USDC at 0.9999 USD.
  assert.deepEqual(data, {
    wallet_address: ACME.holder,
    product_slug: ACME.slug,
    shares: "1200",
    assets: "1249.999999",
    usd_value: "1249.87",
    // The audit view: the vault's figures the position was computed from (decimals offset 12).
    vault: {
      decimals_offset: 12,
      total_assets: "2500000000000",
      total_supply: "2400000000000000000000000",
      usd_price: "0.9999",
    },
  });
}

export async function signedEventIsStoredOnce(send: Send): Promise<void> {
  const body = JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: `u_${crypto.randomUUID()}` },
  });
  const headers = {
    "content-type": "application/json",
    "x-api-key": ACME.sandboxApiKey,
    "x-partner-event": "partner.user.created",
    "x-partner-signature": sign(body),
    "idempotency-key": `evt-${crypto.randomUUID()}`,
  };
  const post = (text: string, extra: Record<string, string> = {}) =>
    send("/api/partner/webhooks/inbound", { method: "POST", headers: { ...headers, ...extra }, body: text });

  const first = await post(body);
  assert.equal(first.status, 200, await first.clone().text());
  const ack = (await first.json()) as { success: boolean; event_id: number; duplicate: boolean };
  assert.equal(ack.success, true);
  assert.ok(Number.isSafeInteger(ack.event_id) && ack.event_id > 0);
  assert.equal(ack.duplicate, false);

  const again = await post(body);
  assert.equal(again.status, 200);
  assert.equal(again.headers.get("idempotent-replayed"), "true");
  assert.deepEqual(await again.json(), { success: true, event_id: ack.event_id, duplicate: true });

  // One byte changed after signing: the HMAC is checked over the raw bytes received.
  const tampered = await post(body.replace("2026", "2025"), {
    "idempotency-key": `evt-${crypto.randomUUID()}`,
  });
  assert.equal(tampered.status, 401);
  assert.equal(((await tampered.json()) as { code: string }).code, "invalid_signature");
}

/**
 * Bad keys from one client address until the failed-authentication limit blocks its guesses
 * (`limit` failures allowed a minute): proves the mount passes the client's address to the core.
 * A valid key from that address is still served.
 */
export async function failedAuthIsLimitedPerAddress(send: Send, limit: number): Promise<void> {
  const guess = () =>
    send("/api/partner/products", { headers: { "x-api-key": "ypk_test_guess" } }).then((r) => r.status);
  for (let i = 0; i < limit; i++) assert.equal(await guess(), 401, `guess ${i + 1}`);
  const blocked = await send("/api/partner/products", { headers: { "x-api-key": "ypk_test_guess" } });
  assert.equal(blocked.status, 429, "the next guess from that address is answered 429");
  assert.ok(Number(blocked.headers.get("retry-after")) > 0);
  await blocked.arrayBuffer();
  // A usable key from that address is still served (CONTRACT §4): guesses lock out only guesses.
  const valid = await send("/api/partner/products", { headers: { "x-api-key": ACME.sandboxApiKey } });
  assert.equal(valid.status, 200, "a valid key from that address is served");
  await valid.arrayBuffer();
}
