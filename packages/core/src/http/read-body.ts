/**
 * The body-size step of CONTRACT §5: the limit is checked against what the adapter reports
 * (Content-Length before reading, bytes while reading), and the body is read only now, after
 * authentication and the rate limit.
 * @module
 */
import { BodyTooLargeError, InvalidBodyError } from "./body.js";
import { ApiError } from "./errors.js";
import type { PlainRequest } from "./plain-request.js";

/**
 * The raw body bytes, at most `limit`. Rejects with ApiError `payload_too_large` (413) over the
 * limit and `invalid_body` (400) when the body could not be read as declared.
 */
export function readBody(request: PlainRequest, limit: number): Promise<Uint8Array> {
  const body = request.body;
  if (body === undefined) return Promise.resolve(new Uint8Array(0));
  if (body instanceof Uint8Array) {
    return body.byteLength > limit ? Promise.reject(tooLarge(limit)) : Promise.resolve(body);
  }
  // The reader's promise with its refusals translated, without an async frame of our own.
  let reading: Promise<Uint8Array>;
  try {
    reading = Promise.resolve(body(limit)); // the same promise when it is one
  } catch (error) {
    reading = Promise.reject(error);
  }
  return reading.then(undefined, (error: unknown) => {
    if (error instanceof BodyTooLargeError) throw tooLarge(limit);
    if (error instanceof InvalidBodyError) throw new ApiError("invalid_body", error.message);
    throw error;
  });
}

function tooLarge(limit: number): ApiError {
  return new ApiError("payload_too_large", `the request body exceeds the limit of ${limit} bytes`);
}
