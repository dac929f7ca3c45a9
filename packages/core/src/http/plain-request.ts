/**
 * The plain request/response pair that `createPartnerApi().handle()` speaks. Adapters (node:http,
 * fetch, a test) translate to and from these; the core never sees a socket.
 */

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

export interface PlainResponse {
  readonly status: number;
  /** Header names in lower case. Always includes `content-type` and `x-request-id`. */
  readonly headers: Record<string, string>;
  /** The serialised body, or null for HEAD and empty responses. */
  readonly body: string | null;
}

export interface PartnerApiHandler {
  handle(request: PlainRequest): Promise<PlainResponse>;
}
