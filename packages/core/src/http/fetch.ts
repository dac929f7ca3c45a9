/**
 * Mounts the API on Web-standard runtimes (Deno, Bun, Workers, service workers):
 * `toFetchHandler(api)` is a `(Request) => Promise<Response>`.
 */
import { BodyTooLargeError } from "./body.js";
import type { PartnerApiHandler } from "./plain-request.js";

export interface FetchHandlerOptions {
  /**
   * Reads the client address from the request (e.g. `CF-Connecting-IP` on Workers, or
   * `info.remoteAddr` captured by `Deno.serve`). Without it every request shares ONE bucket of
   * the failed-authentication limit (CONTRACT §4), so others' failures block valid keys: give one.
   */
  readonly clientAddress?: (request: Request) => string | undefined;
}

/**
 * @example
 * const handler = toFetchHandler(createPartnerApi({ environment: "sandbox", ...data }));
 * Deno.serve(handler);
 */
export function toFetchHandler(
  api: PartnerApiHandler,
  options: FetchHandlerOptions = {},
): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const response = await api.handle({
      method: request.method,
      path: url.pathname,
      query: url.search.slice(1),
      headers,
      clientAddress: options.clientAddress?.(request),
      body: async (limit) => {
        const declared = Number(request.headers.get("content-length") ?? "0");
        if (declared > limit) throw new BodyTooLargeError(limit);
        if (request.body === null) return new Uint8Array(0);
        const reader = request.body.getReader();
        const chunks: Uint8Array[] = [];
        let size = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > limit) {
            await reader.cancel();
            throw new BodyTooLargeError(limit);
          }
          chunks.push(value);
        }
        const body = new Uint8Array(size);
        let offset = 0;
        for (const chunk of chunks) {
          body.set(chunk, offset);
          offset += chunk.byteLength;
        }
        return body;
      },
    });
    return new Response(response.body, { status: response.status, headers: response.headers });
  };
}
