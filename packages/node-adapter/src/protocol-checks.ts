/**
 * What node:http lets through (or, left to itself, answers bare) but this server refuses in the
 * core's problem+json shape (CONTRACT §6, §9): an HTTP/1.1 request without `Host` (node's own 400
 * has no body and no `X-Request-Id`, and is not logged: the server turns `requireHostHeader` off
 * and answers here), an `Expect` other than `100-continue` (node's bare 417), and a
 * `Transfer-Encoding` other than `chunked` alone (node accepts `gzip, chunked` and would hand
 * over the still-compressed bytes), and a repeated `Content-Type` (node keeps the first and drops
 * the others; the header may appear once, RFC 9110 §5.3).
 * @module
 */
import type { IncomingMessage } from "node:http";
import { ApiError } from "@partner-yield/core";

/**
 * The refusal of a request this server does not take, or undefined.
 * @example protocolRefusal(reqWithoutHost)?.code; // "invalid_parameter"
 */
export function protocolRefusal(req: IncomingMessage): ApiError | undefined {
  const headers = req.headers;
  if (headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    return new ApiError("invalid_parameter", "an HTTP/1.1 request needs a Host header");
  }
  const expect = headers.expect;
  if (expect !== undefined && expect.trim().toLowerCase() !== "100-continue") {
    return new ApiError("invalid_parameter", "the Expect header supports only 100-continue");
  }
  const coding = headers["transfer-encoding"];
  if (coding !== undefined && coding.trim().toLowerCase() !== "chunked") {
    return new ApiError(
      "invalid_body",
      "the request body cannot be delimited: the only Transfer-Encoding supported is chunked",
    );
  }
  // Only a request that has the header pays for the count (the GETs of nearly every client do not).
  if (headers["content-type"] !== undefined && contentTypeRepeated(req.rawHeaders)) {
    return new ApiError("invalid_parameter", "the Content-Type header may appear only once");
  }
  return undefined;
}

/** Whether `Content-Type` is among the raw header names more than once (any case). */
function contentTypeRepeated(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 12 && name.toLowerCase() === "content-type") {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}
