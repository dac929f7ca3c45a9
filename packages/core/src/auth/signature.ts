/**
 * Webhook signatures: HMAC-SHA256 over the raw body bytes, compared in constant time
 * (CONTRACT §4, §5). The HMAC itself is a port so a runtime can plug in a native one.
 * @module
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { toHex } from "../encoding/hex.js";
import { accept, type Result, refuse } from "../result.js";

/**
 * HMAC-SHA256 already keyed: `digest` may be called any number of times.
 * @example const tag = nobleHmacSha256.prepare(key).digest(body); // 32 bytes
 */
export interface PreparedHmac {
  digest(message: Uint8Array): Uint8Array;
}

/**
 * A source of keyed HMAC-SHA256 instances.
 * @example const verifier = new SignatureVerifier(["whsec_…"], nobleHmacSha256);
 */
export interface HmacPort {
  prepare(key: Uint8Array): PreparedHmac;
}

/**
 * The pure-JS port (noble-hashes). The key pads are hashed once in `prepare`; each message then
 * starts from a clone of that state, which saves two compression rounds per message.
 * @example toHex(nobleHmacSha256.prepare(new TextEncoder().encode("key")).digest(body));
 */
export const nobleHmacSha256: HmacPort = {
  prepare(key: Uint8Array): PreparedHmac {
    const keyed = hmac.create(sha256, key);
    return {
      digest(message: Uint8Array): Uint8Array {
        return keyed.clone().update(message).digest();
      },
    };
  },
};

const encoder = new TextEncoder();
const SIGNATURE_BYTES = 32;
const SIGNATURE_PREFIX = "sha256=";

/** Value of one hex digit, or −1. */
function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

/**
 * Why `parseSignatureHeader` refused a header: absent or empty, or not the shape of CONTRACT §5.
 * @example const code: SignatureHeaderRefusal = "malformed";
 */
export type SignatureHeaderRefusal = "missing" | "malformed";

/**
 * Decodes an `X-Partner-Signature` header (CONTRACT §5): an optional lowercase `sha256=` prefix,
 * then exactly 64 hex digits in either case. A character loop, not a regex, with the length
 * checked first.
 * @example parseSignatureHeader("sha256=757107ea…3e17"); // { ok: true, value: Uint8Array(32) }
 * @example parseSignatureHeader("abc").code; // "malformed"
 */
export function parseSignatureHeader(value: string | undefined): Result<Uint8Array, SignatureHeaderRefusal> {
  if (value === undefined || value === "") {
    return refuse("missing", "the X-Partner-Signature header is required");
  }
  const hex = value.startsWith(SIGNATURE_PREFIX) ? value.slice(SIGNATURE_PREFIX.length) : value;
  if (hex.length !== SIGNATURE_BYTES * 2) return malformedSignature();
  const out = new Uint8Array(SIGNATURE_BYTES);
  for (let i = 0; i < SIGNATURE_BYTES; i++) {
    const high = hexValue(hex.charCodeAt(2 * i));
    const low = hexValue(hex.charCodeAt(2 * i + 1));
    if (high < 0 || low < 0) return malformedSignature();
    out[i] = (high << 4) | low;
  }
  return accept(out);
}

function malformedSignature() {
  return refuse("malformed", "X-Partner-Signature must be 64 hexadecimal digits (HMAC-SHA256)");
}

/**
 * Byte equality whose time depends only on the lengths, never on where the bytes differ.
 * @example constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2])); // true
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * Checks a body against a partner's active signing secrets (CONTRACT §4 rotation): valid when
 * any secret matches. Secrets are tried in the partner's order until one matches, each comparison
 * in constant time. A signature that matches none is compared with every secret, so a forger
 * learns nothing from the time; only a valid signature stops early, and its sender holds the
 * secret it used (docs/contract.md, "Secrets in answers, logs and CLI output"). The HMAC key is
 * the UTF-8 bytes of the whole secret string, `whsec_` included.
 * @example new SignatureVerifier(["whsec_old…", "whsec_new…"]).verify(body, parseSignatureHeader(header).value);
 */
export class SignatureVerifier {
  readonly #keyed: readonly PreparedHmac[];

  constructor(secrets: readonly string[], port: HmacPort = nobleHmacSha256) {
    this.#keyed = secrets.map((secret) => port.prepare(encoder.encode(secret)));
  }

  verify(body: Uint8Array, signature: Uint8Array): boolean {
    return this.match(body, signature) >= 0;
  }

  /**
   * The index (in the secrets given) of the first secret the signature matches, or -1.
   * @example verifier.match(body, signature); // 1: signed with the second secret
   */
  match(body: Uint8Array, signature: Uint8Array): number {
    for (let i = 0; i < this.#keyed.length; i++) {
      if (constantTimeEqual(this.#keyed[i]!.digest(body), signature)) return i;
    }
    return -1;
  }
}

/**
 * The lowercase hex signature of a body, as a client sends it (for clients, tests, the harness).
 * @example signBody("It's a Secret to Everybody", new TextEncoder().encode("Hello, World!")); // "757107ea…3e17"
 */
export function signBody(secret: string, body: Uint8Array, port: HmacPort = nobleHmacSha256): string {
  return toHex(port.prepare(encoder.encode(secret)).digest(body));
}
