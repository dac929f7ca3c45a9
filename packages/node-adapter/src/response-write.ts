/**
 * Writing a `PlainResponse` to node:http: one `writeHead`, one `end`.
 * @module
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { PlainResponse } from "@partner-yield/core";
import { internalError } from "./refusal.js";

/**
 * Writes `plain` with Content-Length set here (a HEAD answer brings its own) and
 * `Connection: close` when `close`. Returns the bytes of the body written (0 when the response
 * was already sent or destroyed).
 */
export function writeResponse(
  res: ServerResponse,
  method: string,
  plain: PlainResponse,
  close: boolean,
): number {
  if (res.headersSent || res.destroyed) return 0;
  const headers: OutgoingHttpHeaders = { ...plain.headers };
  const length = plain.body === null ? 0 : Buffer.byteLength(plain.body);
  if (plain.body !== null) headers["content-length"] = length;
  else if (method !== "HEAD") headers["content-length"] = 0;
  if (close) headers["connection"] = "close";
  try {
    res.writeHead(plain.status, headers);
  } catch {
    // A header value node refuses (only a wrapped handler could produce one): answer 500 instead.
    const fallback = internalError(plain.headers["x-request-id"] ?? "");
    res.writeHead(fallback.status, {
      ...fallback.headers,
      "content-length": Buffer.byteLength(fallback.body),
      connection: "close",
    });
    res.end(fallback.body);
    return Buffer.byteLength(fallback.body);
  }
  res.end(plain.body ?? undefined);
  return length;
}
