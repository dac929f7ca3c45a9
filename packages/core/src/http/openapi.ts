/**
 * The OpenAPI 3.1 document of the partner API, generated from the route table (`ROUTES`: paths,
 * operations, parameters, the error codes each one can answer with) and the zod schemas
 * (components). There is no second hand-written description: `docs/openapi.json` is this
 * function's output, written by `packages/server/src/write-openapi.ts` and checked for
 * drift by a test.
 * @module
 */
import { DEFAULT_BASE_PATH } from "./base-path.js";
import { COMMON_HEADERS, errorResponse, errorResponses, header, rateHeaders } from "./openapi-responses.js";
import { componentSchemas, parameterComponent, schemaOf } from "./openapi-schemas.js";
import { PARAMETERS } from "./parameters.js";
import { ROUTES, type Route, routeErrorCodes } from "./routes.js";

/** Version of the document (`info.version`); bump on every change of the contract. */
export const OPENAPI_DOCUMENT_VERSION = "0.1.0";

const JSON_MEDIA = "application/json";

type Json = Record<string, unknown>;

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
  "push signed, idempotent partner events. The normative profile is docs/interface.md plus docs/contract.md in the project repository.",
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
