/**
 * The OpenAPI 3.1 document of the partner API, generated from the route table (`ROUTES`: paths,
 * operations, parameters, the error codes each one can answer with) and the zod schemas
 * (components). There is no second hand-written description: `docs/openapi.json` is this
 * function's output, written by `packages/node-adapter/src/write-openapi.ts` and checked for
 * drift by a test.
 * @module
 */
import { z } from "zod";
import { DEFAULT_BASE_PATH } from "./base-path.js";
import { ERRORS, type ErrorCode, PROBLEM_TYPE_BASE } from "./errors.js";
import { PARAMETERS, type ParameterSpec } from "./parameters.js";
import { ROUTES, type Route, routeErrorCodes } from "./routes.js";
import {
  EventAck,
  EventType,
  PartnerEvent,
  PositionResponse,
  Problem,
  ProductListResponse,
  ProductResponse,
  YieldCalculationResponse,
} from "./schemas.js";

/** Version of the document (`info.version`); bump on every change of the contract. */
export const OPENAPI_DOCUMENT_VERSION = "0.1.0";

const REF = "#/components/schemas/";
const PROBLEM_JSON = "application/problem+json";
const JSON_MEDIA = "application/json";

type Json = Record<string, unknown>;

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

const header = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** Strips what a standalone JSON Schema carries but an embedded one must not. */
function embedded(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

function jsonSchema(schema: z.ZodType): Json {
  return embedded(z.toJSONSchema(schema, { target: "draft-2020-12" }) as Json);
}

/** A component schema by reference when it has an id, else inline. */
function schemaOf(schema: z.ZodType | Readonly<Record<string, unknown>>): Json {
  if (!(schema instanceof z.ZodType)) return { ...schema };
  const id = z.globalRegistry.get(schema)?.id;
  return id === undefined ? jsonSchema(schema) : { $ref: REF + id };
}

function parameterComponent(spec: ParameterSpec): Json {
  const out: Json = { name: spec.name, in: spec.in, required: spec.required };
  if (spec.description !== undefined) out["description"] = spec.description;
  out["schema"] = schemaOf(spec.schema);
  return out;
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
    type: PROBLEM_TYPE_BASE + code,
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

function operation(route: Route): Json {
  const authenticated = route.access === "partner";
  const op: Json = {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
  };
  if (!authenticated) op["security"] = [];
  if (route.parameters.length > 0)
    op["parameters"] = route.parameters.map((name) => ({ $ref: `#/components/parameters/${name}` }));
  if (route.requestBody !== undefined) {
    op["requestBody"] = {
      required: true,
      description: route.requestBody.description,
      content: { [JSON_MEDIA]: { schema: schemaOf(route.requestBody.schema) } },
    };
  }
  op["responses"] = {
    "200": {
      description: route.success.description,
      headers: {
        ...COMMON_HEADERS,
        ...(authenticated ? rateHeaders(true) : {}),
        ...Object.fromEntries((route.success.headers ?? []).map((name) => [name, header(name)])),
      },
      content: { [JSON_MEDIA]: { schema: schemaOf(route.success.schema) } },
    },
    ...errorResponses(routeErrorCodes(route), authenticated),
  };
  return op;
}

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

/** Options of `buildOpenApiDocument`. */
export interface OpenApiOptions {
  /** The base path the API is mounted at (`createPartnerApi`'s `basePath`); default `/api/partner`. */
  readonly basePath?: string | undefined;
}

/**
 * The OpenAPI 3.1 document of the API: one operation per entry of the route table with every
 * parameter, header, response and error code of the contract; components generated from the zod
 * schemas.
 *
 * @example
 * const doc = buildOpenApiDocument();
 * doc.openapi; // "3.1.0"
 * Object.keys(doc.paths as object); // ["/api/partner/products", …]
 * Object.keys(buildOpenApiDocument({ basePath: "/v1/partner" }).paths as object)[0]; // "/v1/partner/products"
 */
export function buildOpenApiDocument(options: OpenApiOptions = {}): Record<string, unknown> {
  const basePath = options.basePath ?? DEFAULT_BASE_PATH;
  const paths: Json = {};
  for (const route of ROUTES) {
    const path = basePath + route.path;
    paths[path] = { ...(paths[path] as Json | undefined), [route.method.toLowerCase()]: operation(route) };
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
      parameters: Object.fromEntries(
        Object.entries(PARAMETERS).map(([name, spec]) => [name, parameterComponent(spec)]),
      ),
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
