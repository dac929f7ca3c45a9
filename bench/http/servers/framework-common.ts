/**
 * The GET product endpoint as the framework servers implement it, with the same behaviour as
 * ours: the X-Api-Key is hashed (SHA-256, node:crypto) and looked up (401 problem+json when
 * missing or unknown), the product is serialised per request, the same headers (request id,
 * no-store, nosniff, the rate-limit pair counting down), and one JSON log line per request with
 * the same fields as ours.
 * @module
 */
import { createHash } from "node:crypto";
import { rateLimitHeader, readSpec, requestIds } from "./common.js";

export const spec = readSpec();
const keyHashes = new Map([[sha256Hex(spec.apiKey), "northwind"]]);
const product = (JSON.parse(spec.response.body) as { data: unknown }).data;
const nextId = requestIds();
const nextRateLimit = rateLimitHeader(spec.response.headers["ratelimit"]);
const policy = spec.response.headers["ratelimit-policy"] ?? "";

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export interface FrameworkAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** The answer to a GET product with this X-Api-Key header. */
export function answerProduct(apiKey: string | undefined): FrameworkAnswer {
  const requestId = nextId();
  const partner = apiKey === undefined ? undefined : keyHashes.get(sha256Hex(apiKey));
  if (partner === undefined) {
    return {
      status: 401,
      headers: {
        "content-type": "application/problem+json; charset=utf-8",
        "x-request-id": requestId,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
      body: JSON.stringify({
        type: "about:blank",
        title: "invalid_api_key",
        status: 401,
        request_id: requestId,
      }),
    };
  }
  return {
    status: 200,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "x-request-id": requestId,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "ratelimit-policy": policy,
      ratelimit: nextRateLimit?.() ?? "",
    },
    body: JSON.stringify({ success: true, data: product }),
  };
}

/** The log line's fields, as ours writes them (request-log.ts, issue 27's fields included). */
export function logFields(requestId: string, method: string, path: string, status: number, started: number) {
  return {
    time: new Date().toISOString(),
    level: status >= 500 ? "error" : status >= 400 ? "warn" : "info",
    msg: "request",
    instance: INSTANCE,
    request_id: requestId,
    method,
    path,
    route: "GET /products/{slug}",
    status,
    partner_id: "acme",
    client_address: "127.0.0.1",
    bytes_in: 0,
    bytes_out: 0,
    duration_ms: Math.round((performance.now() - started) * 10) / 10,
  };
}

const INSTANCE = `bench-${process.pid}`;
