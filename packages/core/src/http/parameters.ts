/**
 * Every request parameter a route declares (path, query, header), defined once: the route table
 * names them, the OpenAPI document publishes them as `components.parameters`.
 * @module
 */
import { z } from "zod";
import { JSON_CONTENT_TYPE_PATTERN } from "./inbound-event/content-type.js";
import { EvmAddress, IDEMPOTENCY_KEY_PATTERN, SLUG_PATTERN } from "./schemas.js";

/** A parameter as OpenAPI 3.1 describes it; `schema` is zod, or JSON Schema as published. */
export interface ParameterSpec {
  readonly name: string;
  readonly in: "path" | "query" | "header";
  readonly required: true;
  readonly description?: string;
  readonly schema: z.ZodType | Readonly<Record<string, unknown>>;
}

const SlugParam = z
  .string()
  .regex(SLUG_PATTERN)
  .meta({ description: "Product slug. Unknown, or another partner's product: 404 product_not_found." });

const AmountParam = z
  .string()
  .regex(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/)
  .meta({
    description:
      "Amount to invest, in units of the product's asset: greater than zero, at most asset_decimals fractional " +
      "digits, at most 2^256 − 1 in base units. No exponent, sign, spaces, separators or leading zeros " +
      '(CONTRACT §3). "1.50" is accepted and echoed as "1.5".',
    examples: ["1000", "1.5"],
  });

const IdempotencyKeyHeader = z
  .string()
  .regex(IDEMPOTENCY_KEY_PATTERN)
  .meta({
    description: "1–255 visible ASCII characters, unique per event (CONTRACT §5)",
    examples: ["evt-2026-11-20-0001"],
  });

const SignatureHeader = z
  .string()
  .regex(/^(sha256=)?[0-9a-fA-F]{64}$/)
  .meta({
    description:
      "Hex of HMAC-SHA256 over the raw request body, keyed with the UTF-8 bytes of the whole signing secret " +
      "(whsec_…). Either case; a leading sha256= is tolerated. Compared in constant time (CONTRACT §4, §5).",
  });

// JSON Schema as published: the pattern is the code's own (`JSON_CONTENT_TYPE`), case spelled out.
const ContentTypeHeader = {
  type: "string",
  pattern: JSON_CONTENT_TYPE_PATTERN,
  description:
    "application/json, optionally with charset=utf-8: any letter case, the charset value optionally quoted, " +
    "spaces or tabs around ; and =. Anything else is 415.",
  examples: ["application/json", "application/json; charset=utf-8"],
} as const;

export const PARAMETERS = {
  slug: { name: "slug", in: "path", required: true, schema: SlugParam },
  address: {
    name: "address",
    in: "query",
    required: true,
    description:
      "Wallet address: 0x + 40 hex digits; all-lowercase and all-uppercase are accepted, mixed case must " +
      "match the EIP-55 checksum. Echoed in EIP-55 form. Given more than once: 400 invalid_parameter.",
    schema: EvmAddress,
  },
  amount: {
    name: "amount",
    in: "query",
    required: true,
    description: "Given more than once: 400 invalid_parameter.",
    schema: AmountParam,
  },
  "X-Partner-Event": {
    name: "X-Partner-Event",
    in: "header",
    required: true,
    description: "The event type; must equal the body's event_type (else 400 event_type_mismatch).",
    schema: { $ref: "#/components/schemas/EventType" },
  },
  "X-Partner-Signature": {
    name: "X-Partner-Signature",
    in: "header",
    required: true,
    description: "Missing, malformed or not matching: 401 invalid_signature.",
    schema: SignatureHeader,
  },
  "Idempotency-Key": {
    name: "Idempotency-Key",
    in: "header",
    required: true,
    description:
      "Scope: (partner, environment, key). Missing: 400 missing_idempotency_key; malformed: 400 " +
      "invalid_idempotency_key.",
    schema: IdempotencyKeyHeader,
  },
  "Content-Type": {
    name: "Content-Type",
    in: "header",
    required: true,
    description: "Listed for completeness; the request body's media type says the same.",
    schema: ContentTypeHeader,
  },
} as const satisfies Record<string, ParameterSpec>;

export type ParameterName = keyof typeof PARAMETERS;
