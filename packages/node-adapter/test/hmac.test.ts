/** The native HMAC port against published vectors (RFC 4231), in one call and reused; SHA-256 too. */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { test } from "node:test";
import { nobleHmacSha256, SignatureVerifier, signBody } from "@partner-yield/core";
import { fcParams, HMAC_VECTORS } from "@partner-yield/core/testing";
import fc from "fast-check";
import { nodeHmacSha256, nodeSha256 } from "../src/index.js";

const hex = (s: string) => Buffer.from(s, "hex");

test("RFC 4231 HMAC-SHA256 vectors, each key prepared once and used twice", () => {
  assert.ok(HMAC_VECTORS.rfc4231.length >= 6);
  for (const v of HMAC_VECTORS.rfc4231) {
    const keyed = nodeHmacSha256.prepare(hex(v.key_hex));
    for (let i = 0; i < 2; i++) {
      assert.equal(
        Buffer.from(keyed.digest(hex(v.data_hex))).toString("hex"),
        v.hmac_sha256_hex,
        `case ${v.case}`,
      );
    }
  }
});

test("the published GitHub webhook example signs the same with the native port", () => {
  const g = HMAC_VECTORS.github_example;
  const body = new TextEncoder().encode(g.payload);
  assert.equal(`sha256=${signBody(g.secret, body, nodeHmacSha256)}`, g.header);
});

test("the native port agrees with the pure-JS one on many sizes, and the prepared key is a copy", () => {
  const key = new Uint8Array(Buffer.from("whsec_1suBNkFDZXm7p89emMHkukazxczgnBxt"));
  const keyed = nodeHmacSha256.prepare(key);
  const expected = nobleHmacSha256.prepare(key.slice());
  key.fill(0); // mutating the caller's key must not change the prepared one
  for (const size of [0, 1, 63, 64, 65, 1000, 4096, 4097, 65_535, 65_536, 65_537, 200_000]) {
    const message = new Uint8Array(size).map((_, i) => (i * 31 + size) & 255);
    assert.deepEqual(
      Buffer.from(keyed.digest(message)),
      Buffer.from(expected.digest(message)),
      `size ${size}`,
    );
  }
  const verifier = new SignatureVerifier(["whsec_1suBNkFDZXm7p89emMHkukazxczgnBxt"], nodeHmacSha256);
  const body = new TextEncoder().encode('{"a":1}');
  assert.equal(verifier.verify(body, hex(signBody("whsec_1suBNkFDZXm7p89emMHkukazxczgnBxt", body))), true);
  assert.equal(verifier.verify(body, new Uint8Array(32)), false);
});

test("the native port equals createHmac for any key and message, and earlier digests stay as they were", () => {
  const bytes = (max: number) => fc.uint8Array({ maxLength: max });
  fc.assert(
    fc.property(
      // Keys shorter than, equal to and longer than SHA-256's 64-byte block (hashed first).
      fc.oneof(
        bytes(70),
        bytes(300),
        fc.integer({ min: 60, max: 68 }).map((n) => new Uint8Array(n).fill(n)),
      ),
      fc.array(fc.oneof(bytes(200), bytes(5000)), { minLength: 1, maxLength: 4 }),
      (key, messages) => {
        const keyed = nodeHmacSha256.prepare(key);
        const digests = messages.map((m) => keyed.digest(m));
        // Each digest is its own array: the later calls, which reuse the scratch buffers, left it alone.
        messages.forEach((m, i) => {
          assert.equal(
            Buffer.from(digests[i]!).toString("hex"),
            createHmac("sha256", key).update(m).digest("hex"),
          );
        });
      },
    ),
    fcParams(process.env),
  );
});

test("SHA-256 (FIPS 180-2 vectors)", () => {
  assert.equal(
    Buffer.from(nodeSha256(new TextEncoder().encode("abc"))).toString("hex"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(
    Buffer.from(nodeSha256(new Uint8Array(0))).toString("hex"),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
  // Two calls: the second must not change the first one's bytes.
  const first = nodeSha256(new TextEncoder().encode("abc"));
  nodeSha256(new Uint8Array(1000).fill(7));
  assert.equal(
    Buffer.from(first).toString("hex"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  // A two-block message (FIPS 180-2, "abcdbcde…nopq").
  assert.equal(
    Buffer.from(
      nodeSha256(new TextEncoder().encode("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
    ).toString("hex"),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
});
