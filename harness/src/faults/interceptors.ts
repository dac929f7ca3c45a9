/**
 * Wrapping the real API's `handle()`: the small steps faults and alternatives are made of (look at
 * the request, rewrite it, rewrite the answer).
 * @module
 */
import type {
  PartnerApi,
  PartnerApiHandler,
  PlainRequest,
  PlainResponse,
  ProductRecord,
} from "@partner-yield/core";

/** What a fault may need to know about the target it breaks. */
export interface FaultContext {
  readonly apiKey: string;
  readonly signingSecret: string;
  readonly productionApiKey: string;
  readonly otherPartnerApiKey: string;
  /** A revoked key of the demo partner ("" when the credentials name none). */
  readonly revokedApiKey: string;
  readonly foreignSlug: string;
  /** The demo partner's products by slug. */
  readonly products: ReadonlyMap<string, ProductRecord>;
}

export type Next = (request: PlainRequest) => Promise<PlainResponse>;
export type Interceptor = (request: PlainRequest, next: Next) => Promise<PlainResponse>;

export function intercept(api: PartnerApi, interceptor: Interceptor): PartnerApiHandler {
  const next: Next = (request) => api.handle(request);
  return { handle: (request) => interceptor(request, next) };
}

export const EVENTS = "/api/partner/webhooks/inbound";
export const PRODUCTS = "/api/partner/products";
export const encoder = new TextEncoder();
export const decoder = new TextDecoder();

export function route(request: PlainRequest): { slug?: string; leaf?: string } {
  if (!request.path.startsWith(`${PRODUCTS}/`)) return {};
  const [slug, leaf] = request.path.slice(PRODUCTS.length + 1).split("/");
  return {
    ...(slug === undefined ? {} : { slug: decodedOrRaw(slug) }),
    ...(leaf === undefined ? {} : { leaf }),
  };
}

/** A malformed percent-encoding (`%FF`) names no product: keep it as sent rather than throw. */
function decodedOrRaw(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * True when the request carries a body small enough to look at: a declared Content-Length within
 * the default limit. Streamed or oversized bodies are left to the core, which refuses them (413).
 */
export function smallBody(request: PlainRequest): boolean {
  const length = request.headers["content-length"];
  return length !== undefined && /^[0-9]+$/.test(length) && Number(length) <= 65_536;
}

export function query(request: PlainRequest): URLSearchParams {
  return new URLSearchParams(request.query ?? "");
}

export function withQuery(request: PlainRequest, params: URLSearchParams): PlainRequest {
  return { ...request, query: params.toString() };
}

export function withHeader(request: PlainRequest, name: string, value: string | undefined): PlainRequest {
  const headers = { ...request.headers, [name]: value };
  if (value === undefined) delete headers[name];
  return { ...request, headers };
}

/** Reads the body once, so a fault can look at it, and hands the bytes on. */
export async function withBytes(request: PlainRequest): Promise<[PlainRequest, Uint8Array]> {
  const body = request.body;
  const bytes =
    body === undefined ? new Uint8Array(0) : typeof body === "function" ? await body(1 << 20) : body;
  return [{ ...request, body: bytes }, bytes];
}

export function json(response: PlainResponse): unknown {
  return response.body === null ? undefined : JSON.parse(response.body);
}

// biome-ignore lint/suspicious/noExplicitAny: a fault rewrites whatever JSON the real handler wrote.
export type AnyJson = any;

export function rewriteJson(response: PlainResponse, edit: (body: AnyJson) => unknown): PlainResponse {
  if (response.body === null) return response;
  return { ...response, body: JSON.stringify(edit(JSON.parse(response.body))) };
}

export function problem(
  status: number,
  code: string,
  detail: string,
  extra: Record<string, string> = {},
): PlainResponse {
  return {
    status,
    headers: {
      "content-type": "application/problem+json; charset=utf-8",
      "x-request-id": "req_fault",
      ...extra,
    },
    body: JSON.stringify({
      success: false,
      type: `https://partner-yield.dev/errors/${code}`,
      title: code,
      status,
      code,
      detail,
      request_id: "req_fault",
    }),
  };
}

export function codeOf(response: PlainResponse): string | undefined {
  try {
    const body = json(response) as { code?: unknown } | undefined;
    return typeof body?.code === "string" ? body.code : undefined;
  } catch {
    return undefined;
  }
}

export function dropHeaders(response: PlainResponse, ...names: string[]): PlainResponse {
  const headers = { ...response.headers };
  for (const name of names) delete headers[name];
  return { ...response, headers };
}

/** Yield-calc data with `edit(data, product)` applied. */
export function rewriteQuote(
  context: FaultContext,
  request: PlainRequest,
  response: PlainResponse,
  edit: (data: Record<string, string>, product: ProductRecord) => void,
): PlainResponse {
  const { slug, leaf } = route(request);
  const product = slug === undefined ? undefined : context.products.get(slug);
  if (leaf !== "yield-calc" || response.status !== 200 || product === undefined) return response;
  return rewriteJson(response, (body) => {
    edit(body.data, product);
    return body;
  });
}
