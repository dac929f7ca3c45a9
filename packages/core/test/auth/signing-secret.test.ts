import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateSigningSecret, isSigningSecret } from "../../src/auth/signing-secret.js";

describe("signing secrets (CONTRACT §4)", () => {
  test("generated secrets are whsec_ + 32 base64url characters, and differ", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const secret = generateSigningSecret();
      assert.match(secret, /^whsec_[A-Za-z0-9_-]{32}$/);
      assert.ok(isSigningSecret(secret));
      seen.add(secret);
    }
    assert.equal(seen.size, 100);
  });

  test("every byte value maps into the alphabet, all 64 characters reachable", () => {
    const all = generateSigningSecret(() => Uint8Array.from({ length: 32 }, (_, i) => i * 2 + 1));
    const rest = generateSigningSecret(() => Uint8Array.from({ length: 32 }, (_, i) => 192 + i * 2));
    assert.ok(isSigningSecret(all) && isSigningSecret(rest));
    assert.equal(new Set((all.slice(6) + rest.slice(6)).split("")).size, 64);
  });

  test("a random source that returns too few bytes is an error, not a short secret", () => {
    assert.throws(() => generateSigningSecret(() => new Uint8Array(31)), RangeError);
  });

  test("isSigningSecret refuses other shapes", () => {
    for (const bad of [
      "",
      "whsec_",
      "whsec_" + "A".repeat(31),
      "whsec_" + "A".repeat(33),
      "whsec_" + "+".repeat(32),
    ]) {
      assert.ok(!isSigningSecret(bad), bad);
    }
    assert.ok(!isSigningSecret("WHSEC_" + "A".repeat(32)));
  });
});
