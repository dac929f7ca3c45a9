/**
 * How the core handles credentials (CONTRACT §4, §5), checked by what it does rather than by
 * reading its source: the key store is only ever asked for a SHA-256 hash, never for a key; the
 * signature check reads every byte of both digests whatever they hold, and tries every secret
 * before it refuses a signature (a valid one stops at the secret it matched).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { constantTimeEqual } from "../../src/auth/signature.js";
import {
  type ApiKeyRecord,
  createPartnerApi,
  generateApiKey,
  type HmacPort,
  hashApiKey,
  nobleHmacSha256,
  type PartnerStore,
  SignatureVerifier,
  signBody,
} from "../../src/index.js";
import { DEMO, loadSandbox, signedEventRequest } from "../sandbox.js";

test("the KeyStore port only ever receives the key's SHA-256 hash, the PartnerStore only a partner id", async () => {
  const sandbox = loadSandbox();
  const asked: string[] = [];
  const partnersAsked: string[] = [];
  const keys = {
    findByHash(keyHash: string): ApiKeyRecord | undefined {
      asked.push(keyHash);
      return sandbox.keys.findByHash(keyHash);
    },
    close: () => Promise.resolve(),
  };
  const partners: PartnerStore = {
    getPartner(partnerId: string) {
      partnersAsked.push(partnerId);
      return sandbox.partners.getPartner(partnerId);
    },
    close: () => Promise.resolve(),
  };
  const api = createPartnerApi({
    environment: "sandbox",
    ...sandbox,
    keys,
    partners,
    failedAuthPerMinute: 1000,
  });
  const unknownButWellFormed = generateApiKey("sandbox");
  const sent = [
    DEMO.sandboxApiKey,
    DEMO.revokedSandboxApiKey,
    DEMO.productionApiKey,
    unknownButWellFormed,
    "junk",
  ];
  for (const key of sent) {
    await api.handle({
      method: "GET",
      path: "/api/partner/products",
      headers: { "x-api-key": key },
      clientAddress: "192.0.2.1",
    });
  }
  await api.handle(
    signedEventRequest(
      '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":{}}',
      "k1",
      {
        clientAddress: "192.0.2.1",
      },
    ),
  );
  assert.ok(asked.length >= 3, `asked ${asked.length} times`);
  for (const argument of asked) {
    assert.match(argument, /^[0-9a-f]{64}$/, "a lowercase hex SHA-256, nothing else");
    for (const key of sent) assert.ok(!argument.includes(key), "never the key");
  }
  // Exactly the hashes of the keys whose format and environment passed (the checksum and the prefix
  // are checked without a lookup).
  assert.deepEqual(
    [...new Set(asked)].sort(),
    [DEMO.sandboxApiKey, DEMO.revokedSandboxApiKey, unknownButWellFormed].map((k) => hashApiKey(k)).sort(),
  );
  for (const id of partnersAsked) assert.equal(id, DEMO.partnerId);
});

/** A Uint8Array whose element reads are counted. */
function counted(bytes: Uint8Array, reads: { n: number }): Uint8Array {
  return new Proxy(bytes, {
    get(target, property, receiver) {
      if (typeof property === "string" && /^[0-9]+$/.test(property)) reads.n++;
      const value = Reflect.get(target, property, target === receiver ? target : target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

test("constantTimeEqual reads every byte of both inputs, wherever they differ", () => {
  for (const differAt of [0, 1, 16, 31, -1]) {
    const a = new Uint8Array(32).fill(7);
    const b = new Uint8Array(32).fill(7);
    if (differAt >= 0) b[differAt] = 8;
    const reads = { n: 0 };
    assert.equal(constantTimeEqual(counted(a, reads), counted(b, reads)), differAt < 0);
    assert.equal(reads.n, 64, `differing at ${differAt}: every byte read`);
  }
});

test("SignatureVerifier tries every secret before a refusal, and stops at the one that matched", () => {
  let digests = 0;
  const port: HmacPort = {
    prepare(key) {
      const inner = nobleHmacSha256.prepare(key);
      return {
        digest(data) {
          digests++;
          return inner.digest(data);
        },
      };
    },
  };
  const body = new TextEncoder().encode("{}");
  const secrets = [
    "whsec_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "whsec_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    DEMO.signingSecret,
  ];
  const signature = Uint8Array.from(Buffer.from(signBody(DEMO.signingSecret, body), "hex"));
  // The matching secret last, in the middle, first: one digest for each secret up to it.
  for (const [order, expected] of [
    [secrets, 3],
    [[secrets[0]!, DEMO.signingSecret, secrets[1]!], 2],
    [[...secrets].reverse(), 1],
  ] as const) {
    digests = 0;
    assert.equal(new SignatureVerifier(order, port).verify(body, signature), true);
    assert.equal(digests, expected);
    // A signature that matches none is compared with every secret.
    digests = 0;
    assert.equal(new SignatureVerifier(order, port).verify(body, new Uint8Array(32)), false);
    assert.equal(digests, 3);
    digests = 0;
    const offByOne = signature.slice();
    offByOne[31] = offByOne[31]! ^ 1;
    assert.equal(new SignatureVerifier(order, port).verify(body, offByOne), false);
    assert.equal(digests, 3, "a near miss is refused only after every secret");
  }
});
