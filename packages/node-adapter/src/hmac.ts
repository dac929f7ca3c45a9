/**
 * Native HMAC-SHA256 and SHA-256 for the core's ports (CONTRACT §4, §5), from node:crypto (OpenSSL).
 * @module
 */
import { createHash, createHmac } from "node:crypto";
import type { HmacPort, PreparedHmac } from "@partner-yield/core";

/**
 * The core's `HmacPort` on node:crypto: `createHmac` with the key prepared once as a `Buffer`. The
 * RFC 4231 vectors and a property against the pure-JS port check it (test/hmac.test.ts).
 *
 * @example
 * const api = createPartnerApi({ environment: "sandbox", ...data, hmac: nodeHmacSha256 });
 * toHex(nodeHmacSha256.prepare(new TextEncoder().encode("key")).digest(body));
 */
export const nodeHmacSha256: HmacPort = {
  prepare(key: Uint8Array): PreparedHmac {
    const secret = Buffer.from(key);
    return {
      digest: (message: Uint8Array): Uint8Array => createHmac("sha256", secret).update(message).digest(),
    };
  },
};

/**
 * SHA-256 on node:crypto, for the core's `sha256` option (API key hashes, event fingerprints).
 * @example toHex(nodeSha256(new TextEncoder().encode("abc"))); // "ba7816bf…15ad"
 */
export function nodeSha256(data: Uint8Array): Uint8Array {
  return createHash("sha256").update(data).digest();
}
