/**
 * The OpenAPI 3.1 document of the partner API, generated from the zod schemas in `schemas.ts`
 * (components) and the tables below (operations, the error codes each one can answer with).
 * There is no second hand-written description: `docs/openapi.json` is this function's output,
 * written by `packages/node-adapter/src/write-openapi.ts` and checked for drift by a test.
 * @module
 */
import { z } from "zod";
import { ERRORS, type ErrorCode } from "./errors.js";
import {
  EventAck,
  EventType,
  EvmAddress,
  IDEMPOTENCY_KEY_PATTERN,
  PartnerEvent,
  PositionResponse,
  Problem,
  ProductListResponse,
  ProductResponse,
  SLUG_PATTERN,
  YieldCalculationResponse,
} from "./schemas.js";

/** Version of the document (`info.version`); bump on every change of the contract. */
export const OPENAPI_DOCUMENT_VERSION = "0.1.0";

const REF = "#/components/schemas/";
const PROBLEM_JSON = "application/problem+json";
const JSON_MEDIA = "application/json";

type Json = Record<string, unknown>;

// Request parameters that have no resource schema of their own (CONTRACT §3, §5).
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
const ContentTypeHeader = z
  .enum(["application/json", "application/json; charset=utf-8"])
  .meta({ description: "application/json, optionally with charset=utf-8; anything else is 415." });

/** HTTP reason phrases of the statuses the API answers with (RFC 9110). */
const REASON: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** When each error code is answered, for the response descriptions (one line per code). */
const WHEN: Readonly<Record<ErrorCode, string>> = {
  invalid_parameter: "a query parameter is repeated or badly percent-encoded",
  invalid_amount: "`amount` is missing or breaks a rule of CONTRACT §3 (the detail says which)",
  invalid_address: "`address` is missing, not 0x + 40 hex digits, or mixed case with a wrong EIP-55 checksum",
  invalid_body: "the body could not be read as declared (shorter than Content-Length, client aborted)",
  missing_idempotency_key: "the Idempotency-Key header is absent",
  invalid_idempotency_key: "Idempotency-Key is not 1–255 visible ASCII characters",
  invalid_json: "the body is not UTF-8 JSON",
  invalid_event: "the event does not match the PartnerEvent schema; `errors` lists the failing JSON pointers",
  event_type_mismatch: "X-Partner-Event is absent or differs from the body's event_type",
  missing_api_key: "the X-Api-Key header is absent",
  invalid_api_key: "the key is malformed, unknown or revoked",
  wrong_environment: "the key belongs to the other environment (the detail names it)",
  invalid_signature: "X-Partner-Signature is absent, malformed, or matches none of the partner's secrets",
  product_not_found: "no product of the calling partner has this slug",
  not_found: "no such endpoint",
  method_not_allowed: "the path exists but not with this method; see Allow",
  request_timeout: "the request (headers or body) was not received within the server's timeout",
  product_not_active: "the product is paused or deprecated; yield is quoted for active products only",
  metrics_unavailable: "the product has no metrics yet",
  idempotency_in_progress:
    "an event with this Idempotency-Key is still being stored; retry after Retry-After",
  payload_too_large: "the body exceeds the limit (64 KiB by default), by Content-Length or while reading",
  unsupported_media_type: "Content-Type is not application/json (charset utf-8)",
  idempotency_key_reused: "the Idempotency-Key was used before for a different event",
  rate_limited:
    "the partner's rolling-minute quota is used up, or too many failed authentications came from this address",
  headers_too_large: "the request headers exceed the server's limit",
  internal_error: "an unexpected error (no details are given)",
  service_unavailable: "a backing store is unavailable; retry after Retry-After",
};

/** Errors every authenticated operation can answer with (CONTRACT §4, §6, §7). */
const AUTHENTICATED_ERRORS: readonly ErrorCode[] = [
  "missing_api_key",
  "invalid_api_key",
  "wrong_environment",
  "rate_limited",
  "internal_error",
  "service_unavailable",
];

interface OperationSpec {
  readonly path: string;
  readonly method: "get" | "post";
  readonly operationId: string;
  readonly tag: string;
  readonly summary: string;
  readonly description: string;
  readonly authenticated: boolean;
  readonly parameters: readonly Json[];
  readonly requestBody?: Json;
  readonly success: { readonly description: string; readonly schema: Json; readonly headers?: Json };
  /** Error codes beyond AUTHENTICATED_ERRORS. */
  readonly errors: readonly ErrorCode[];
}

const param = (name: string): Json => ({ $ref: `#/components/parameters/${name}` });
const header = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

const OPERATIONS: readonly OperationSpec[] = [
  {
    path: "/api/partner/products",
    method: "get",
    operationId: "listProducts",
    tag: "Products",
    summary: "List the partner's products",
    description:
      "All products of the calling partner, every status, ordered by slug. No pagination (CONTRACT §8).",
    authenticated: true,
    parameters: [],
    success: { description: "The partner's products.", schema: { $ref: `${REF}ProductListResponse` } },
    errors: [],
  },
  {
    path: "/api/partner/products/{slug}",
    method: "get",
    operationId: "getProduct",
    tag: "Products",
    summary: "Get a product",
    description: "One product of the calling partner, with its latest metrics (null until it has any).",
    authenticated: true,
    parameters: [param("slug")],
    success: { description: "The product.", schema: { $ref: `${REF}ProductResponse` } },
    errors: ["product_not_found"],
  },
  {
    path: "/api/partner/products/{slug}/position",
    method: "get",
    operationId: "getPosition",
    tag: "Products",
    summary: "Position of a wallet",
    description:
      "A wallet's shares in the product's wrapper, the assets they convert to (ERC-4626 convertToAssets) and " +
      'their USD value. A wallet that holds nothing gets 200 with "0" everywhere (CONTRACT §2). The product ' +
      "is resolved before the address is validated. Works for every product status.",
    authenticated: true,
    parameters: [param("slug"), param("address")],
    success: { description: "The wallet's position.", schema: { $ref: `${REF}PositionResponse` } },
    errors: ["invalid_parameter", "invalid_address", "product_not_found"],
  },
  {
    path: "/api/partner/products/{slug}/yield-calc",
    method: "get",
    operationId: "calculateYield",
    tag: "Products",
    summary: "Yield calculator",
    description:
      "Expected annual and compound-monthly yield of an amount at the product's net APY, exact to the last " +
      "base unit and never overstated (CONTRACT §2). The product is resolved before the amount is validated.",
    authenticated: true,
    parameters: [param("slug"), param("amount")],
    success: { description: "The yield estimate.", schema: { $ref: `${REF}YieldCalculationResponse` } },
    errors: [
      "invalid_parameter",
      "invalid_amount",
      "product_not_found",
      "product_not_active",
      "metrics_unavailable",
    ],
  },
  {
    path: "/api/partner/webhooks/inbound",
    method: "post",
    operationId: "receivePartnerEvent",
    tag: "Events",
    summary: "Receive a partner event",
    description:
      "A signed, idempotent event from the partner. Checks run in this order and the first failure wins: " +
      "authentication (401) → rate limit (429) → body size (413) → Content-Type (415) → signature (401 " +
      "invalid_signature) → Idempotency-Key (400) → JSON (400 invalid_json) → schema (400 invalid_event) → " +
      "X-Partner-Event equals event_type (400 event_type_mismatch) → idempotency. A request refused before the " +
      "idempotency step leaves no record, so it can be fixed and resent with the same key. A repeat with the " +
      "same key and the same event (canonical JSON) is answered 200 with the original event_id, duplicate: " +
      "true and Idempotent-Replayed: true; the same key with another event is 422 (CONTRACT §5).",
    authenticated: true,
    parameters: [
      param("X-Partner-Event"),
      param("X-Partner-Signature"),
      param("Idempotency-Key"),
      param("Content-Type"),
    ],
    requestBody: {
      required: true,
      description: "The event, signed over its exact bytes. At most 64 KiB by default.",
      content: { [JSON_MEDIA]: { schema: { $ref: `${REF}PartnerEvent` } } },
    },
    success: {
      description: "Accepted: stored durably before this answer, or a duplicate of an earlier event.",
      schema: { $ref: `${REF}EventAck` },
      headers: { "Idempotent-Replayed": header("Idempotent-Replayed") },
    },
    errors: [
      "invalid_body",
      "missing_idempotency_key",
      "invalid_idempotency_key",
      "invalid_json",
      "invalid_event",
      "event_type_mismatch",
      "invalid_signature",
      "idempotency_in_progress",
      "payload_too_large",
      "unsupported_media_type",
      "idempotency_key_reused",
    ],
  },
];

/** Strips what a standalone JSON Schema carries but an embedded one must not. */
function embedded(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

function jsonSchema(schema: z.ZodType): Json {
  return embedded(z.toJSONSchema(schema, { target: "draft-2020-12" }) as Json);
}

/**
 * The component schemas: every schema with a `.meta({ id })` reachable from the API's roots, as
 * zod generates them. Taken from the global registry (which holds the descriptions too) and cut
 * to what the roots reference, so schemas other modules register never leak in.
 */
function componentSchemas(): Json {
  const generated = z.toJSONSchema(z.globalRegistry, {
    target: "draft-2020-12",
    uri: (id) => REF + id,
  }).schemas as Record<string, Json>;
  const roots = [
    ProductListResponse,
    ProductResponse,
    PositionResponse,
    YieldCalculationResponse,
    PartnerEvent,
    EventAck,
    Problem,
    EventType,
  ];
  const wanted = new Set<string>();
  const visit = (id: string) => {
    if (wanted.has(id)) return;
    const schema = generated[id];
    if (schema === undefined) throw new Error(`OpenAPI: component ${id} was not generated`);
    wanted.add(id);
    for (const ref of JSON.stringify(schema).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g))
      visit(ref[1]!);
  };
  for (const root of roots) {
    const id = z.globalRegistry.get(root)?.id;
    if (id === undefined) throw new Error("OpenAPI: a root schema has no .meta({ id })");
    visit(id);
  }
  const out: Json = {};
  for (const id of [...wanted].sort()) out[id] = embedded(generated[id]!);
  return out;
}

const COMMON_HEADERS: Json = {
  "X-Request-Id": header("X-Request-Id"),
  "Cache-Control": header("Cache-Control"),
  "X-Content-Type-Options": header("X-Content-Type-Options"),
};

function rateHeaders(required: boolean): Json {
  return required
    ? { RateLimit: header("RateLimit"), "RateLimit-Policy": header("RateLimit-Policy") }
    : {
        RateLimit: header("RateLimit-IfAuthenticated"),
        "RateLimit-Policy": header("RateLimit-Policy-IfAuthenticated"),
      };
}

function errorResponse(status: number, codes: readonly ErrorCode[], authenticated: boolean): Json {
  const headers: Json = { ...COMMON_HEADERS };
  if (authenticated && status !== 401) Object.assign(headers, rateHeaders(false));
  if (authenticated && status === 401 && codes.includes("invalid_signature"))
    Object.assign(headers, rateHeaders(false));
  if (status === 429 || status === 503) headers["Retry-After"] = header("Retry-After");
  if (status === 409 && codes.includes("idempotency_in_progress"))
    headers["Retry-After"] = header("Retry-After-IfInProgress");
  if (status === 405) headers["Allow"] = header("Allow");
  const lines = codes.map((code) => `- \`${code}\`: ${WHEN[code]}`);
  return {
    description:
      codes.length === 1
        ? `${ERRORS[codes[0]!].title}.\n\n${lines.join("\n")}`
        : `${REASON[status] ?? "Error"}. \`code\` is one of:\n\n${lines.join("\n")}`,
    headers,
    content: {
      [PROBLEM_JSON]: {
        schema: {
          allOf: [
            { $ref: `${REF}Problem` },
            {
              type: "object",
              properties: { status: { const: status }, code: { enum: [...codes] } },
            },
          ],
        },
        examples: Object.fromEntries(
          codes.map((code) => [code, { summary: ERRORS[code].title, value: exampleProblem(code) }]),
        ),
      },
    },
  };
}

function exampleProblem(code: ErrorCode): Json {
  return {
    success: false,
    type: `https://partner-yield.dev/errors/${code}`,
    title: ERRORS[code].title,
    status: ERRORS[code].status,
    code,
    detail: WHEN[code],
    request_id: "req_3f9a1c0d2b7e000001",
  };
}

/** Error responses of an operation, one per status, each listing the codes it can carry. */
function errorResponses(codes: readonly ErrorCode[], authenticated: boolean): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERRORS[code].status;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  const out: Json = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    out[String(status)] = errorResponse(status, byStatus.get(status)!, authenticated);
  }
  return out;
}

function operation(spec: OperationSpec): Json {
  const codes = spec.authenticated ? [...spec.errors, ...AUTHENTICATED_ERRORS] : [...spec.errors];
  const op: Json = {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
  };
  if (!spec.authenticated) op["security"] = [];
  if (spec.parameters.length > 0) op["parameters"] = spec.parameters;
  if (spec.requestBody !== undefined) op["requestBody"] = spec.requestBody;
  op["responses"] = {
    "200": {
      description: spec.success.description,
      headers: {
        ...COMMON_HEADERS,
        ...(spec.authenticated ? rateHeaders(true) : {}),
        ...spec.success.headers,
      },
      content: { [JSON_MEDIA]: { schema: spec.success.schema } },
    },
    ...errorResponses(codes, spec.authenticated),
  };
  return op;
}

const OPENAPI_OPERATION: OperationSpec = {
  path: "/api/partner/openapi.json",
  method: "get",
  operationId: "getOpenApiDocument",
  tag: "Meta",
  summary: "This document",
  description: "The OpenAPI 3.1 description of this API. No authentication.",
  authenticated: false,
  parameters: [],
  success: {
    description: "The OpenAPI document.",
    schema: { type: "object", description: "An OpenAPI 3.1 document" },
  },
  errors: [],
};

function stringHeader(description: string, required: boolean, schema: Json = { type: "string" }): Json {
  return { description, required, schema };
}

const INFO_DESCRIPTION = [
  "Partner-facing yield products: list products, read a wallet's position, compute an expected yield, and",
  "push signed, idempotent partner events. The normative profile is `interface.md` plus `CONTRACT.md`.",
  "",
  "- **Environments**: one server serves one environment, sandbox or production, with identical paths.",
  "  Keys are `ypk_test_…` (sandbox) and `ypk_live_…` (production); a key of the other environment is",
  "  `401 wrong_environment`.",
  "- **Numbers**: every amount and rate is a canonical decimal string; rates are fractions (`0.0523` = 5.23 %).",
  "- **Errors**: `application/problem+json` (RFC 9457) with `success: false`, a stable `code` and the",
  "  `request_id`. Each response below lists the codes its status can carry.",
  "- **Routing comes first**: an unknown path is `404 not_found` and a known path with another method is",
  "  `405 method_not_allowed` with `Allow`, both before authentication (see `components.responses`).",
  "  `HEAD` is answered as `GET` without a body wherever `GET` is allowed.",
  "- **Transport**: a request whose headers or body do not arrive in time is `408 request_timeout`;",
  "  headers over the server's size limit are `431 headers_too_large` (see `components.responses`).",
  "- **Rate limits**: per partner and environment, an exact rolling 60-second window (production 1000,",
  "  sandbox 100 by default). Authenticated responses carry `RateLimit` and `RateLimit-Policy`; a 429",
  "  carries `Retry-After`. Failed authentications are limited per client address (30 a minute).",
  "- Every response carries `X-Request-Id` (a sane incoming one is echoed), `Cache-Control: no-store` and",
  "  `X-Content-Type-Options: nosniff`. No CORS.",
].join("\n");

/**
 * The OpenAPI 3.1 document of the API: components generated from the zod schemas, one operation
 * per endpoint with every parameter, header, response and error code of the contract.
 *
 * @example
 * const doc = buildOpenApiDocument();
 * doc.openapi; // "3.1.0"
 * Object.keys(doc.paths as object); // ["/api/partner/products", …]
 */
export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Json = {};
  for (const spec of [...OPERATIONS, OPENAPI_OPERATION]) {
    paths[spec.path] = { ...(paths[spec.path] as Json | undefined), [spec.method]: operation(spec) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Partner Yield Products API",
      version: OPENAPI_DOCUMENT_VERSION,
      description: INFO_DESCRIPTION,
    },
    servers: [{ url: "http://127.0.0.1:8787", description: "Local sandbox (`partner-yield serve`)" }],
    security: [{ ApiKey: [] }],
    tags: [
      { name: "Products", description: "Yield products, positions and the yield calculator" },
      { name: "Events", description: "Events from the partner to the service" },
      { name: "Meta", description: "About the API itself" },
    ],
    paths,
    components: {
      securitySchemes: {
        ApiKey: {
          type: "apiKey",
          in: "header",
          name: "X-Api-Key",
          description:
            "ypk_test_ (sandbox) or ypk_live_ (production) + 32 base62 characters + a 6-character base62 CRC-32 " +
            "checksum. Missing: 401 missing_api_key; malformed, unknown or revoked: 401 invalid_api_key; other " +
            "environment: 401 wrong_environment (CONTRACT §4).",
        },
      },
      parameters: {
        slug: { name: "slug", in: "path", required: true, schema: jsonSchema(SlugParam) },
        address: {
          name: "address",
          in: "query",
          required: true,
          description:
            "Wallet address: 0x + 40 hex digits; all-lowercase and all-uppercase are accepted, mixed case must " +
            "match the EIP-55 checksum. Echoed in EIP-55 form. Given more than once: 400 invalid_parameter.",
          schema: jsonSchema(EvmAddress),
        },
        amount: {
          name: "amount",
          in: "query",
          required: true,
          description: "Given more than once: 400 invalid_parameter.",
          schema: jsonSchema(AmountParam),
        },
        "X-Partner-Event": {
          name: "X-Partner-Event",
          in: "header",
          required: true,
          description: "The event type; must equal the body's event_type (else 400 event_type_mismatch).",
          schema: { $ref: `${REF}EventType` },
        },
        "X-Partner-Signature": {
          name: "X-Partner-Signature",
          in: "header",
          required: true,
          description: "Missing, malformed or not matching: 401 invalid_signature.",
          schema: jsonSchema(SignatureHeader),
        },
        "Idempotency-Key": {
          name: "Idempotency-Key",
          in: "header",
          required: true,
          description:
            "Scope: (partner, environment, key). Missing: 400 missing_idempotency_key; malformed: 400 " +
            "invalid_idempotency_key.",
          schema: jsonSchema(IdempotencyKeyHeader),
        },
        "Content-Type": {
          name: "Content-Type",
          in: "header",
          required: true,
          description: "Listed for completeness; the request body's media type says the same.",
          schema: jsonSchema(ContentTypeHeader),
        },
      },
      headers: {
        "X-Request-Id": stringHeader(
          "The request's id, also in a problem's request_id and in the server log. A sane incoming X-Request-Id " +
            "(1–128 of A-Z a-z 0-9 . _ : -) is echoed; otherwise one is generated.",
          true,
        ),
        "Cache-Control": stringHeader("Always no-store.", true, { type: "string", const: "no-store" }),
        "X-Content-Type-Options": stringHeader("Always nosniff.", true, { type: "string", const: "nosniff" }),
        RateLimit: stringHeader(
          'IETF RateLimit header: "<environment>";r=<remaining>;t=<seconds until remaining next grows>.',
          true,
          { type: "string", examples: ['"sandbox";r=99;t=60'] },
        ),
        "RateLimit-Policy": stringHeader(
          'IETF RateLimit-Policy header: "<environment>";q=<quota>;w=60.',
          true,
          {
            type: "string",
            examples: ['"sandbox";q=100;w=60'],
          },
        ),
        "RateLimit-IfAuthenticated": stringHeader(
          "As RateLimit; present when the request was authenticated (every status but most 401s and the per-address 429).",
          false,
          { type: "string", examples: ['"sandbox";r=0;t=12'] },
        ),
        "RateLimit-Policy-IfAuthenticated": stringHeader(
          "As RateLimit-Policy; present when the request was authenticated.",
          false,
          { type: "string", examples: ['"sandbox";q=100;w=60'] },
        ),
        "Retry-After": stringHeader(
          "Seconds to wait before retrying; for a 429 never earlier than RateLimit's t.",
          true,
          {
            type: "string",
            pattern: "^[0-9]+$",
          },
        ),
        "Retry-After-IfInProgress": stringHeader("1, with idempotency_in_progress.", false, {
          type: "string",
          pattern: "^[0-9]+$",
        }),
        "Idempotent-Replayed": stringHeader(
          "true when this answer replays an earlier event (duplicate: true).",
          false,
          {
            type: "string",
            const: "true",
          },
        ),
        Allow: stringHeader("The methods the path allows, e.g. GET, HEAD.", true),
      },
      responses: {
        NotFound: errorResponse(404, ["not_found"], false),
        MethodNotAllowed: errorResponse(405, ["method_not_allowed"], false),
        RequestTimeout: errorResponse(408, ["request_timeout"], false),
        HeadersTooLarge: errorResponse(431, ["headers_too_large"], false),
      },
      schemas: componentSchemas(),
    },
  };
}
