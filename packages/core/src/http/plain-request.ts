/**
 * The plain request/response pair that `createPartnerApi().handle()` speaks. Adapters (node:http,
 * fetch, a test) translate to and from these; the core never sees a socket.
 */
import type { Environment } from "../auth/environment.js";

/** Reads the raw request body, refusing more than `limit` bytes (see `BodyTooLargeError`). */
export type BodyReader = (limit: number) => Promise<Uint8Array>;

export interface PlainRequest {
  /** Upper-case HTTP method, e.g. `GET`. */
  readonly method: string;
  /** The path without the query string, exactly as received (not decoded), e.g. `/api/partner/products`. */
  readonly path: string;
  /** The raw query string without the leading `?` (empty string or undefined when absent). */
  readonly query?: string | undefined;
  /** Header names in lower case; repeated headers joined with `", "` as node:http does. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /**
   * The raw body bytes, or a reader the core calls once, after authentication and rate limiting
   * (CONTRACT §5 order of checks), with the body limit. Absent means an empty body.
   */
  readonly body?: Uint8Array | BodyReader | undefined;
  /**
   * The client's network address, for the failed-authentication limit (CONTRACT §4). Requests
   * without one share ONE bucket of that limit (never unlimited): adapters should always supply one.
   */
  readonly clientAddress?: string | undefined;
  /**
   * A request id already chosen by the adapter (e.g. a sane incoming `X-Request-Id`); one that
   * `acceptableRequestId` refuses (not 1–128 of `A-Za-z0-9._:-`, or like an API key or signing
   * secret) is replaced by a generated id.
   */
  readonly requestId?: string | undefined;
}

export interface PlainResponse extends ResponseOutcome {
  readonly status: number;
  /** Header names in lower case. Always includes `content-type` and `x-request-id`. */
  readonly headers: Record<string, string>;
  /** The serialised body, or null for HEAD and empty responses. */
  readonly body: string | null;
}

/**
 * What became of a request, for the adapter's logs, metrics and traces: fields of the response
 * `handle()` answers (no object of its own), never sent to the client. Each is absent when the
 * request did not get that far. None holds a secret: never the key, only its id.
 */
export interface ResponseOutcome {
  /**
   * The route that took the request: its method and path template below the base path, e.g.
   * `GET /products/{slug}` (a `HEAD` is taken by the `GET` route). Absent for 404 and 405: a
   * bounded set of values, fit for a metric label.
   */
  readonly route?: string | undefined;
  /** The `error.code` of a problem answer (CONTRACT §6), e.g. `invalid_api_key`, `rate_limited`. */
  readonly errorCode?: string | undefined;
  /**
   * The partner of the key presented, once the key store found that key (also a revoked one,
   * answered 401 `invalid_api_key`).
   */
  readonly partnerId?: string | undefined;
  /** The id of the key presented (as `keys list` shows it), when found and its store keeps ids. */
  readonly keyId?: string | undefined;
  /** The environment of the API that answered (`sandbox` or `production`). */
  readonly environment?: Environment | undefined;
}

export interface PartnerApiHandler {
  handle(request: PlainRequest): Promise<PlainResponse>;
}
