/**
 * Every error the API can answer with, in ONE table: stable code → HTTP status and title
 * (CONTRACT §6). Bodies are RFC 9457 problem+json with the envelope's `success: false`.
 */
import { redactCredentials } from "../auth/credential-shape.js";

export const ERRORS = {
  invalid_parameter: { status: 400, title: "Invalid parameter" },
  invalid_amount: { status: 400, title: "Invalid amount" },
  invalid_address: { status: 400, title: "Invalid address" },
  invalid_body: { status: 400, title: "Invalid request body" },
  missing_idempotency_key: { status: 400, title: "Missing Idempotency-Key" },
  invalid_idempotency_key: { status: 400, title: "Invalid Idempotency-Key" },
  invalid_json: { status: 400, title: "Invalid JSON" },
  invalid_event: { status: 400, title: "Invalid event" },
  event_type_mismatch: { status: 400, title: "Event type mismatch" },
  missing_api_key: { status: 401, title: "Missing API key" },
  invalid_api_key: { status: 401, title: "Invalid API key" },
  wrong_environment: { status: 401, title: "Wrong environment" },
  invalid_signature: { status: 401, title: "Invalid signature" },
  product_not_found: { status: 404, title: "Product not found" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  request_timeout: { status: 408, title: "Request timeout" },
  product_not_active: { status: 409, title: "Product not active" },
  metrics_unavailable: { status: 409, title: "Metrics unavailable" },
  idempotency_in_progress: { status: 409, title: "Idempotency key in progress" },
  payload_too_large: { status: 413, title: "Payload too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  idempotency_key_reused: { status: 422, title: "Idempotency key reused" },
  rate_limited: { status: 429, title: "Too many requests" },
  headers_too_large: { status: 431, title: "Request header fields too large" },
  internal_error: { status: 500, title: "Internal error" },
  service_unavailable: { status: 503, title: "Service unavailable" },
  event_store_full: { status: 503, title: "Event store full" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERRORS;

export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

/** Base of every problem `type` URI. */
export const PROBLEM_TYPE_BASE = "https://partner-yield.dev/errors/";

/** One failing field, as a JSON pointer into the request (`/query/amount`, `/body/occurred_at`). */
export interface FieldError {
  readonly pointer: string;
  readonly detail: string;
}

/**
 * An error the API answers with. Thrown inside the core and turned into a problem response in
 * one place. `detail` is for humans and must never contain a secret.
 *
 * @example throw new ApiError("invalid_amount", "amount must be greater than zero", { errors: [{ pointer: "/query/amount", detail: "…" }] })
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  readonly title: string;
  readonly errors: readonly FieldError[] | undefined;
  /** Extra response headers, e.g. `allow` or `retry-after`. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    options: { errors?: readonly FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(`${code}: ${detail}`);
    const entry = ERRORS[code];
    this.status = entry.status;
    this.title = entry.title;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export interface ProblemBody {
  success: false;
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  request_id: string;
  errors?: FieldError[];
}

/** The problem+json body for an error; anything shaped like a key or secret is masked. */
export function problemBody(error: ApiError, requestId: string): ProblemBody {
  const body: ProblemBody = {
    success: false,
    type: PROBLEM_TYPE_BASE + error.code,
    title: error.title,
    status: error.status,
    code: error.code,
    detail: redactCredentials(error.detail),
    request_id: requestId,
  };
  if (error.errors !== undefined && error.errors.length > 0) {
    body.errors = error.errors.map((e) => ({
      pointer: redactCredentials(e.pointer),
      detail: redactCredentials(e.detail),
    }));
  }
  return body;
}
