/**
 * THE route table: every endpoint once, with what the router, the OpenAPI document and the tests
 * need (method, path, operation id, parameters, error codes, success schema) and its handler.
 * To add an endpoint: one entry here and a handler in `handlers/`.
 * @module
 */
import type { z } from "zod";
import type { ErrorCode } from "./errors.js";
import type { PartnerHandler, PublicHandler } from "./handler.js";
import { calculateYield } from "./handlers/calculate-yield.js";
import { getOpenApiDocument } from "./handlers/get-openapi-document.js";
import { getPosition } from "./handlers/get-position.js";
import { getProduct } from "./handlers/get-product.js";
import { listProducts } from "./handlers/list-products.js";
import { receivePartnerEvent } from "./handlers/receive-partner-event.js";
import type { ParameterName } from "./parameters.js";
import {
  EventAck,
  PartnerEvent,
  PositionResponse,
  ProductListResponse,
  ProductResponse,
  YieldCalculationResponse,
} from "./schemas.js";

/** Response headers a route may add to its 200 (see `components.headers` of the document). */
export type SuccessHeaderName = "Idempotent-Replayed";

interface RouteFields {
  /** `GET` routes answer `HEAD` too (CONTRACT §9). */
  readonly method: "GET" | "POST";
  /** Below the base path; `{name}` is a path parameter matching one non-empty segment. */
  readonly path: string;
  readonly operationId: string;
  readonly tag: "Products" | "Events" | "Meta";
  readonly summary: string;
  readonly description: string;
  readonly parameters: readonly ParameterName[];
  readonly requestBody?: {
    readonly description: string;
    readonly schema: z.ZodType;
  };
  /** The codes this route answers with beyond routing and, for partner routes, `AUTHENTICATED_ERRORS`. */
  readonly errors: readonly ErrorCode[];
  readonly success: {
    readonly description: string;
    /** A zod schema with a `.meta({ id })` (published as a `$ref`), or JSON Schema as published. */
    readonly schema: z.ZodType | Readonly<Record<string, unknown>>;
    readonly headers?: readonly SuccessHeaderName[];
  };
}

/** A route open to anyone: no key, no rate limit. */
export interface PublicRoute extends RouteFields {
  readonly access: "public";
  readonly handle: PublicHandler;
}

/** A route that needs a key: authentication, then the partner's rate limit, then the handler. */
export interface PartnerRoute extends RouteFields {
  readonly access: "partner";
  readonly handle: PartnerHandler;
}

export type Route = PublicRoute | PartnerRoute;

/** Errors every partner route can answer with (CONTRACT §4, §6, §7). */
export const AUTHENTICATED_ERRORS: readonly ErrorCode[] = [
  "missing_api_key",
  "invalid_api_key",
  "wrong_environment",
  "rate_limited",
  "internal_error",
  "service_unavailable",
];

/** Every error code a route can answer with once routed (its own, then the authentication ones). */
export function routeErrorCodes(route: Route): readonly ErrorCode[] {
  return route.access === "partner" ? [...route.errors, ...AUTHENTICATED_ERRORS] : route.errors;
}

export const ROUTES: readonly Route[] = [
  {
    method: "GET",
    path: "/products",
    operationId: "listProducts",
    access: "partner",
    tag: "Products",
    summary: "List the partner's products",
    description:
      "All products of the calling partner, every status, ordered by slug. No pagination (CONTRACT §8).",
    parameters: [],
    errors: [],
    success: { description: "The partner's products.", schema: ProductListResponse },
    handle: listProducts,
  },
  {
    method: "GET",
    path: "/products/{slug}",
    operationId: "getProduct",
    access: "partner",
    tag: "Products",
    summary: "Get a product",
    description: "One product of the calling partner, with its latest metrics (null until it has any).",
    parameters: ["slug"],
    errors: ["product_not_found"],
    success: { description: "The product.", schema: ProductResponse },
    handle: getProduct,
  },
  {
    method: "GET",
    path: "/products/{slug}/position",
    operationId: "getPosition",
    access: "partner",
    tag: "Products",
    summary: "Position of a wallet",
    description:
      "A wallet's shares in the product's wrapper, the assets they convert to (ERC-4626 convertToAssets) and " +
      'their USD value. A wallet that holds nothing gets 200 with "0" everywhere (CONTRACT §2). The product ' +
      "is resolved before the address is validated. Works for every product status.",
    parameters: ["slug", "address"],
    errors: ["invalid_parameter", "invalid_address", "product_not_found"],
    success: { description: "The wallet's position.", schema: PositionResponse },
    handle: getPosition,
  },
  {
    method: "GET",
    path: "/products/{slug}/yield-calc",
    operationId: "calculateYield",
    access: "partner",
    tag: "Products",
    summary: "Yield calculator",
    description:
      "Expected annual and compound-monthly yield of an amount at the product's net APY, exact to the last " +
      "base unit and never overstated (CONTRACT §2). The product is resolved before the amount is validated.",
    parameters: ["slug", "amount"],
    errors: [
      "invalid_parameter",
      "invalid_amount",
      "product_not_found",
      "product_not_active",
      "metrics_unavailable",
    ],
    success: { description: "The yield estimate.", schema: YieldCalculationResponse },
    handle: calculateYield,
  },
  {
    method: "POST",
    path: "/webhooks/inbound",
    operationId: "receivePartnerEvent",
    access: "partner",
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
    parameters: ["X-Partner-Event", "X-Partner-Signature", "Idempotency-Key", "Content-Type"],
    requestBody: {
      description: "The event, signed over its exact bytes. At most 64 KiB by default.",
      schema: PartnerEvent,
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
      "event_store_full",
    ],
    success: {
      description: "Accepted: stored durably before this answer, or a duplicate of an earlier event.",
      schema: EventAck,
      headers: ["Idempotent-Replayed"],
    },
    handle: receivePartnerEvent,
  },
  {
    method: "GET",
    path: "/openapi.json",
    operationId: "getOpenApiDocument",
    access: "public",
    tag: "Meta",
    summary: "This document",
    description: "The OpenAPI 3.1 description of this API. No authentication.",
    parameters: [],
    errors: [],
    success: {
      description: "The OpenAPI document.",
      schema: { type: "object", description: "An OpenAPI 3.1 document" },
    },
    handle: getOpenApiDocument,
  },
];
