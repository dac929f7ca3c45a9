/**
 * The raw request body as the core's `BodyReader` (CONTRACT §5), read straight from the
 * `IncomingMessage`: the limit is checked against Content-Length before reading, bytes are
 * counted as chunks arrive and reading stops at the limit (chunked bodies too), the chunks are
 * concatenated once, and the exact bytes go to the core, which verifies the HMAC over them.
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type BodyReader, BodyTooLargeError, InvalidBodyError } from "@partner-yield/core";

/** What happened to a request's body; the listener reads it when it writes the response. */
export interface BodyState {
  /** The core called the reader. */
  requested: boolean;
  /** `100 Continue` was sent (only for `Expect: 100-continue` requests whose body the core asked for). */
  continued: boolean;
  /** Reading stopped before the end (over the limit): the rest is unread, the connection cannot be reused. */
  abandoned: boolean;
  /** The body will never be complete: the client ended its side early, or sent bytes the parser refused (see `truncateBody`). */
  truncated: boolean;
  /** Why the parser refused the body, when it did (the `detail` of the 400). */
  fault: string | undefined;
  /** Body bytes received by the reader so far (for the request log's `bytes_in`). */
  received: number;
  /** Set while the reader waits for bytes: rejects it at once. */
  onTruncated: (() => void) | undefined;
}

/** A fresh state for one request. */
export function newBodyState(): BodyState {
  return {
    requested: false,
    continued: false,
    abandoned: false,
    truncated: false,
    fault: undefined,
    received: 0,
    onTruncated: undefined,
  };
}

/**
 * Marks the body as cut short, at once or whenever the core asks for it: the client sent fewer
 * bytes than Content-Length and then ended its side of the connection (node reports it as a parse
 * error, `HPE_INVALID_EOF_STATE`, not as an end of the request), or node's parser refused the body
 * (`fault`: e.g. a malformed chunk size), after which it delivers no more of it. The reader rejects
 * with `InvalidBodyError`, so the core answers 400 invalid_body instead of waiting for the request
 * timeout. Later calls change nothing.
 */
export function truncateBody(state: BodyState, fault?: string): void {
  if (state.truncated) return;
  state.truncated = true;
  state.fault = fault;
  state.onTruncated?.();
}

/** True when the request announces a body (a non-zero Content-Length, or Transfer-Encoding). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** The declared Content-Length, or undefined (chunked, or absent). node's parser has validated its syntax. */
export function declaredLength(req: IncomingMessage): number | undefined {
  const length = req.headers["content-length"];
  return length === undefined || req.headers["transfer-encoding"] !== undefined ? undefined : Number(length);
}

/**
 * Whether the connection must close after the response because the request's body is not (and
 * will not be) read to its end: reading stopped at the limit; `100 Continue` was never sent
 * (`deferContinue`), so the client may or may not send the body; or the core did not ask for a
 * body too large (over `drainLimit`), or of unknown size, to drain. A small unread body is left to
 * node, which discards it and keeps the connection.
 */
export function leftUnread(
  req: IncomingMessage,
  state: BodyState,
  drainLimit: number,
  deferContinue = false,
): boolean {
  if (req.complete) return false;
  if (state.abandoned || state.truncated) return true;
  if (deferContinue && !state.continued) return true;
  if (state.requested) return false;
  const declared = declaredLength(req);
  return declared === undefined || declared > drainLimit;
}

/**
 * A `BodyReader` over `req`. Rejects with `BodyTooLargeError` when Content-Length exceeds the limit
 * (nothing is read) or when the counted bytes do (reading stops there), and with
 * `InvalidBodyError` when the body ends short of Content-Length or the client goes away before
 * the end. `continueResponse`: for a request that sent `Expect: 100-continue`, the response on
 * which to send `100 Continue`, once the core has asked for the body and the size is acceptable,
 * so a client is not invited to upload before it is authenticated.
 *
 * @example
 * const body = await createBodyReader(req, newBodyState())(65_536); // Buffer with the exact bytes
 */
export function createBodyReader(
  req: IncomingMessage,
  state: BodyState,
  continueResponse?: ServerResponse,
): BodyReader {
  return (limit: number) => {
    if (state.requested) return Promise.reject(new Error("the request body can be read only once"));
    state.requested = true;
    const declared = declaredLength(req);
    if (declared !== undefined && declared > limit) {
      state.abandoned = !req.complete;
      return Promise.reject(new BodyTooLargeError(limit));
    }
    if (state.truncated) return Promise.reject(shortBody(declared, undefined, state.fault));
    // Gone before the core asked (a reset while the request waited for its turn, or for an async
    // store): a destroyed request delivers no more data, end or close; waiting would never end.
    if (req.destroyed) return Promise.reject(new InvalidBodyError(CLIENT_GONE));
    // Parsed to its end already (a small body comes in the same read as its headers, and the core
    // asks for it a turn later): it is all in the stream's buffer, taken in one `read()`.
    if (req.complete && req.readableFlowing !== true) return completeBody(req, state, declared, limit);
    if (continueResponse !== undefined && !state.continued) {
      state.continued = true;
      continueResponse.writeContinue();
    }
    return new Promise<Uint8Array>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let received = 0;
      const cleanup = () => {
        state.onTruncated = undefined;
        req.off("data", onData);
        req.off("end", onEnd);
        req.off("error", onGone);
        req.off("close", onGone);
      };
      const onData = (chunk: Buffer) => {
        received += chunk.length;
        state.received = received;
        if (received > limit) {
          cleanup();
          req.pause();
          chunks.length = 0;
          state.abandoned = true;
          reject(new BodyTooLargeError(limit));
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = () => {
        cleanup();
        if (declared !== undefined && received !== declared) {
          reject(shortBody(declared, received));
          return;
        }
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
      };
      const onGone = () => {
        cleanup();
        chunks.length = 0;
        reject(new InvalidBodyError(CLIENT_GONE));
      };
      state.onTruncated = () => {
        cleanup();
        chunks.length = 0;
        reject(shortBody(declared, received, state.fault));
      };
      req.on("data", onData);
      req.on("end", onEnd);
      req.on("error", onGone);
      req.on("close", onGone);
    });
  };
}

/**
 * The whole body of a request node has parsed to its end, from the stream's buffer: `read()` with
 * no size returns everything buffered (node buffers a body up to its high-water mark before it
 * stops reading the socket; a larger one is not complete before it is read). The same refusals
 * as the streaming path: over the limit, or fewer bytes than Content-Length.
 */
function completeBody(
  req: IncomingMessage,
  state: BodyState,
  declared: number | undefined,
  limit: number,
): Promise<Uint8Array> {
  const body = (req.read() as Buffer | null) ?? EMPTY;
  state.received = body.length;
  // Over the limit but complete: nothing is left unread, so the state stays not abandoned.
  if (body.length > limit) return Promise.reject(new BodyTooLargeError(limit));
  if (declared !== undefined && body.length !== declared)
    return Promise.reject(shortBody(declared, body.length));
  return Promise.resolve(body);
}

const EMPTY = new Uint8Array(0);

const CLIENT_GONE = "the client closed the connection before the body was complete";

function shortBody(
  declared: number | undefined,
  received: number | undefined,
  fault?: string,
): InvalidBodyError {
  const got = received === undefined ? "" : ` after ${received} bytes`;
  if (fault !== undefined) return new InvalidBodyError(`the body is malformed${got}: ${fault}`);
  return new InvalidBodyError(
    declared === undefined
      ? `the chunked body ended${got} without its last chunk`
      : `the body ended${got}; Content-Length declared ${declared}`,
  );
}
