/**
 * Answers the adapter gives itself, in the core's problem+json shape (CONTRACT §6, §9), with the
 * codes of the core's one `ERRORS` table: the 500 of a handler that threw, and the refusals of
 * requests node:http cannot parse or that arrive too slowly, written straight to the socket when
 * there is no request object to answer through.
 * @module
 */
import { STATUS_CODES } from "node:http";
import { ApiError, type PlainResponse, problemResponse } from "@partner-yield/core";

/** Methods some route accepts, for the `Allow` of a refused `CONNECT` (its path is not routed). */
export const ANY_ROUTE_METHODS = "GET, HEAD, POST";

/** Parser errors about how the body is delimited: a bad Content-Length, Transfer-Encoding or chunk. */
const BODY_FRAMING_ERRORS = new Set([
  "HPE_INVALID_CONTENT_LENGTH",
  "HPE_UNEXPECTED_CONTENT_LENGTH",
  "HPE_INVALID_TRANSFER_ENCODING",
  "HPE_INVALID_CHUNK_SIZE",
  "HPE_CHUNK_EXTENSIONS_OVERFLOW",
  "HPE_INVALID_EOF_STATE",
]);

export { problemResponse };

/** The 500 of a handler that threw or rejected (no details: CONTRACT §6). */
export function internalError(requestId: string): PlainResponse & { body: string } {
  return problemResponse(new ApiError("internal_error", "an unexpected error occurred"), requestId);
}

/**
 * The problem for an error node:http reports on a connection (`clientError`): `408 request_timeout`
 * for a request not received within the headers or request timeout, `431 headers_too_large`,
 * `400 invalid_body` for a bad Content-Length, Transfer-Encoding or chunk (extensions included),
 * and `400 invalid_parameter` for any other malformed request line or header (unknown or
 * lower-case method, raw non-ASCII byte in the target, bad header name, …). The parser's reason is
 * a fixed text, never the client's bytes.
 *
 * @example clientErrorProblem(Object.assign(new Error("Parse Error"), { code: "HPE_INVALID_METHOD", reason: "Invalid method encountered" })).code; // "invalid_parameter"
 */
export function clientErrorProblem(error: NodeJS.ErrnoException & { reason?: unknown }): ApiError {
  const code = error.code ?? "";
  const reason = typeof error.reason === "string" && error.reason !== "" ? error.reason : code;
  if (code === "ERR_HTTP_REQUEST_TIMEOUT")
    return new ApiError("request_timeout", "the request was not received in time");
  if (code === "HPE_HEADER_OVERFLOW")
    return new ApiError("headers_too_large", "the request line and headers are too large");
  if (BODY_FRAMING_ERRORS.has(code))
    return new ApiError("invalid_body", `the request body cannot be delimited: ${reason}`);
  return new ApiError("invalid_parameter", `the request cannot be parsed: ${reason}`);
}

/**
 * A complete HTTP/1.1 response that closes the connection, for a socket node:http no longer
 * answers through a `ServerResponse` (a parse error, a timeout, `CONNECT`).
 * @example socket.end(rawResponse(problemResponse(error, requestId)));
 */
export function rawResponse(plain: PlainResponse): string {
  const body = plain.body ?? "";
  const lines = [`HTTP/1.1 ${plain.status} ${STATUS_CODES[plain.status] ?? "Error"}`];
  for (const [name, value] of Object.entries(plain.headers)) {
    if (name !== "content-length" && name !== "connection" && name !== "date")
      lines.push(`${canonicalName(name)}: ${value}`);
  }
  lines.push(
    `Date: ${new Date().toUTCString()}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    "",
    body,
  );
  return lines.join("\r\n");
}

/** `x-request-id` → `X-Request-Id`: names are case-insensitive; this is only the usual spelling. */
function canonicalName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}
