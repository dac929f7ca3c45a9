import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, test } from "node:test";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import fc from "fast-check";
import {
  constantTimeEqual,
  type HmacPort,
  nobleHmacSha256,
  parseSignatureHeader,
  SignatureVerifier,
  signBody,
} from "../../src/auth/signature.js";
import { toHex } from "../../src/encoding/hex.js";
import { unwrap } from "../../src/result.js";
import { fcParams, HMAC_VECTORS } from "../../src/testing/index.js";

const encoder = new TextEncoder();
const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex, "hex"));
const utf8 = (text: string) => encoder.encode(text);

/** node:crypto as a second implementation of the port. */
const nodeHmacSha256: HmacPort = {
  prepare(key) {
    return { digest: (message) => Uint8Array.from(createHmac("sha256", key).update(message).digest()) };
  },
};

/** Feeds the message to noble's incremental HMAC in pieces of `size` bytes. */
function nobleInPieces(key: Uint8Array, message: Uint8Array, size: number): string {
  const mac = hmac.create(sha256, key);
  for (let i = 0; i < message.length; i += size) mac.update(message.subarray(i, i + size));
  return toHex(mac.digest());
}

describe("RFC 4231 HMAC-SHA-256 vectors", () => {
  test("the copied vector file holds every HMAC-SHA-256 row of RFC 4231 §4 (case 5 is truncated output)", () => {
    assert.deepEqual(
      HMAC_VECTORS.rfc4231.map((row) => row.case),
      ["1", "2", "3", "4", "6", "7"],
    );
  });

  for (const row of HMAC_VECTORS.rfc4231) {
    test(`case ${row.case}: noble whole, noble in pieces, node:crypto`, () => {
      const key = bytes(row.key_hex);
      const data = bytes(row.data_hex);
      const prepared = nobleHmacSha256.prepare(key);
      assert.equal(toHex(prepared.digest(data)), row.hmac_sha256_hex);
      // The prepared state is cloned per message, so reuse gives the same answer.
      assert.equal(toHex(prepared.digest(data)), row.hmac_sha256_hex);
      for (const size of [1, 7, 64, 1000]) assert.equal(nobleInPieces(key, data, size), row.hmac_sha256_hex);
      assert.equal(toHex(nodeHmacSha256.prepare(key).digest(data)), row.hmac_sha256_hex);
    });
  }
});

describe("GitHub webhook example", () => {
  const { secret, payload, header } = HMAC_VECTORS.github_example;

  test("signBody reproduces the published header with both ports", () => {
    assert.equal("sha256=" + signBody(secret, utf8(payload)), header);
    assert.equal("sha256=" + signBody(secret, utf8(payload), nodeHmacSha256), header);
  });

  test("the verifier accepts it with and without the sha256= prefix, in either case", () => {
    const verifier = new SignatureVerifier([secret]);
    const hex = header.slice("sha256=".length);
    for (const value of [header, hex, hex.toUpperCase(), "sha256=" + hex.toUpperCase()]) {
      const signature = parseSignatureHeader(value);
      assert.ok(signature.ok, value);
      assert.ok(verifier.verify(utf8(payload), signature.value), value);
    }
  });
});

describe("parseSignatureHeader", () => {
  const hex = "ab".repeat(32);

  test("decodes 64 hex digits to 32 bytes", () => {
    assert.deepEqual(parseSignatureHeader(hex), { ok: true, value: new Uint8Array(32).fill(0xab) });
    assert.deepEqual(parseSignatureHeader("sha256=" + "0F".repeat(32)), {
      ok: true,
      value: new Uint8Array(32).fill(0x0f),
    });
  });

  test("refuses absent, short, long, non-hex and oddly prefixed values", () => {
    const refused = [
      undefined,
      "",
      "sha256=",
      hex.slice(1),
      hex + "a",
      hex + hex,
      "g" + hex.slice(1),
      hex.slice(1) + " ",
      " " + hex,
      "SHA256=" + hex,
      "sha1=" + hex.slice(0, 40),
      "sha256=sha256=" + hex,
      "0x" + hex.slice(2),
      "x".repeat(100_000),
    ];
    for (const value of refused) {
      const result = parseSignatureHeader(value);
      const expected = value === undefined || value === "" ? "missing" : "malformed";
      assert.equal(result.ok ? "accepted" : result.code, expected, String(value).slice(0, 80));
    }
  });

  test("property: any 32 bytes round-trip through lower or upper hex, prefixed or not", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.boolean(),
        fc.boolean(),
        (raw, upper, prefix) => {
          const text = upper ? toHex(raw).toUpperCase() : toHex(raw);
          assert.deepEqual(parseSignatureHeader(prefix ? "sha256=" + text : text), { ok: true, value: raw });
        },
      ),
      fcParams(process.env),
    );
  });
});

describe("constantTimeEqual", () => {
  test("compares bytes and lengths", () => {
    assert.ok(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3])));
    assert.ok(!constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4])));
    assert.ok(!constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2])));
    assert.ok(constantTimeEqual(new Uint8Array(0), new Uint8Array(0)));
  });
});

describe("SignatureVerifier (CONTRACT §4, §5)", () => {
  const secrets = ["whsec_" + "A".repeat(32), "whsec_" + "b-_9".repeat(8), "whsec_" + "Z".repeat(32)];
  const body = utf8('{"event_type":"deposit","data":{"amount":"1000.5"}}');

  test("a signature by any of several active secrets is valid (rotation)", () => {
    const verifier = new SignatureVerifier(secrets);
    for (const secret of secrets) {
      assert.ok(verifier.verify(body, unwrap(parseSignatureHeader(signBody(secret, body)))), secret);
    }
  });

  test("the key is the whole secret string, whsec_ included", () => {
    const verifier = new SignatureVerifier([secrets[0]!]);
    assert.ok(!verifier.verify(body, unwrap(parseSignatureHeader(signBody("A".repeat(32), body)))));
  });

  test("an unknown secret, a tampered body or a tampered signature is refused", () => {
    const verifier = new SignatureVerifier(secrets);
    const signature = unwrap(parseSignatureHeader(signBody(secrets[1]!, body)));
    assert.ok(
      !verifier.verify(body, unwrap(parseSignatureHeader(signBody("whsec_" + "Q".repeat(32), body)))),
    );
    const tampered = body.slice();
    tampered[10] = tampered[10]! ^ 1;
    assert.ok(!verifier.verify(tampered, signature));
    assert.ok(
      !verifier.verify(utf8('{"event_type": "deposit","data":{"amount":"1000.5"}}'), signature),
      "re-serialised",
    );
    const flipped = signature.slice();
    flipped[31] = flipped[31]! ^ 0x80;
    assert.ok(!verifier.verify(body, flipped));
    assert.ok(!verifier.verify(body, signature.subarray(0, 31)));
  });

  test("a verifier with no secrets accepts nothing", () => {
    assert.ok(
      !new SignatureVerifier([]).verify(body, unwrap(parseSignatureHeader(signBody(secrets[0]!, body)))),
    );
  });

  test("works the same over the node:crypto port", () => {
    const verifier = new SignatureVerifier(secrets, nodeHmacSha256);
    assert.ok(verifier.verify(body, unwrap(parseSignatureHeader(signBody(secrets[2]!, body)))));
    assert.ok(!verifier.verify(body.subarray(1), unwrap(parseSignatureHeader(signBody(secrets[2]!, body)))));
  });

  test("property: noble and node:crypto agree on arbitrary keys and bodies", () => {
    fc.assert(
      fc.property(fc.string(), fc.uint8Array({ maxLength: 300 }), (secret, message) => {
        assert.equal(signBody(secret, message), signBody(secret, message, nodeHmacSha256));
      }),
      fcParams(process.env),
    );
  });
});
