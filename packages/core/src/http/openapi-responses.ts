/**
 * The responses of the OpenAPI document: the headers every answer carries, and the error
 * responses of an operation, one per status, listing the codes it can carry with when each is
 * answered and an example problem.
 * @module
 */
import { ERRORS, type ErrorCode, PROBLEM_TYPE_BASE } from "./errors.js";

type Json = Record<string, unknown>;

const PROBLEM_JSON = "application/problem+json";
const REF = "#/components/schemas/";

/** A reference to a component header. */
export const header = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

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
  invalid_json: "the body is not UTF-8 JSON, or names a member twice in one object (`errors` points at it)",
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
  event_store_full:
    "the server's in-memory event store is at its bound and accepts no new event (a duplicate still gets its answer); PostgreSQL is the store for real use",
};

export const COMMON_HEADERS: Json = {
  "X-Request-Id": header("X-Request-Id"),
  "Cache-Control": header("Cache-Control"),
  "X-Content-Type-Options": header("X-Content-Type-Options"),
};

export function rateHeaders(required: boolean): Json {
  return required
    ? { RateLimit: header("RateLimit"), "RateLimit-Policy": header("RateLimit-Policy") }
    : {
        RateLimit: header("RateLimit-IfAuthenticated"),
        "RateLimit-Policy": header("RateLimit-Policy-IfAuthenticated"),
      };
}

export function errorResponse(status: number, codes: readonly ErrorCode[], authenticated: boolean): Json {
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
export function errorResponses(codes: readonly ErrorCode[], authenticated: boolean): Json {
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
