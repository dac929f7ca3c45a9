/**
 * The published HMAC-SHA256 vectors (RFC 4231 section 4, and GitHub's webhook example, the
 * `sha256=` header form): one copy, read by core's signature tests, the node adapter's native HMAC
 * port tests and any team checking its own HMAC port.
 * @module
 */
import vectors from "./hmac-vectors.json" with { type: "json" };

/** One RFC 4231 case: key and message as hex, the HMAC-SHA256 digest as lower-case hex. */
export interface HmacVector {
  readonly case: string;
  readonly key_hex: string;
  readonly data_hex: string;
  readonly hmac_sha256_hex: string;
}

/** A webhook body signed with a secret, and the signature header it gets. */
export interface WebhookSignatureVector {
  readonly secret: string;
  readonly payload: string;
  readonly header: string;
}

/**
 * @example for (const v of HMAC_VECTORS.rfc4231) assert(hex(hmac(v.key_hex, v.data_hex)) === v.hmac_sha256_hex);
 */
export const HMAC_VECTORS: {
  readonly source: string;
  readonly rfc4231: readonly HmacVector[];
  readonly github_example: WebhookSignatureVector;
} = vectors;
