/**
 * The partner API as one pure entry point: `handle(request) → response` (CONTRACT §3–§9).
 * No sockets, no framework: adapters translate to and from `PlainRequest` / `PlainResponse`.
 * Each request: route (404/405) → for partner routes, authenticate (401/429) and count against
 * the rate limit (429) → the route's handler; any error becomes its answer in `replyToFailure`.
 * @module
 */
import type { Environment } from "../auth/environment.js";
import type { EventStore } from "../stores/event-store.js";
import { authenticate } from "./authenticate.js";
import { resolveDependencies } from "./dependencies.js";
import { replyToFailure } from "./failure.js";
import { acceptableRequestId } from "./incoming-request-id.js";
import { buildOpenApiDocument } from "./openapi.js";
import type { PartnerApiOptions } from "./partner-api-options.js";
import type { PartnerApiHandler, PlainRequest } from "./plain-request.js";
import { countRequest } from "./rate-limit.js";
import { type Reply, render, withHeaders } from "./reply.js";
import { requestIdGenerator } from "./request-id.js";
import { createRouter } from "./router.js";
import { ROUTES } from "./routes.js";

export interface PartnerApi extends PartnerApiHandler {
  readonly environment: Environment;
  /** The event store in use (the default memory one unless given). */
  readonly events: EventStore;
  /** True while the instance accepts traffic; false after `close()`. */
  ready(): Promise<boolean>;
  /** Closes every store and source that has a `close`. Call after requests in flight finished. */
  close(): Promise<void>;
}

/**
 * Creates the API. All stores are ports (see `PartnerApiOptions`).
 * @throws RangeError when `basePath` is not `""` or `/` + segments without a trailing `/`.
 *
 * @example
 * const data = loadFixtures(files);
 * const api = createPartnerApi({ environment: "sandbox", ...data });
 * const res = await api.handle({ method: "GET", path: "/api/partner/products", headers: { "x-api-key": key } });
 */
export function createPartnerApi(options: PartnerApiOptions): PartnerApi {
  const deps = resolveDependencies(options, buildOpenApiDocument);
  const router = createRouter(ROUTES, deps.basePath);
  const nextRequestId = options.generateRequestId ?? requestIdGenerator();
  let open = true;

  async function dispatch(request: PlainRequest, requestId: string): Promise<Reply> {
    const { route, params } = router.match(request.method, request.path);
    if (route.access === "public") return route.handle({ request, params }, deps);
    const partner = await authenticate(request, deps);
    const count = await countRequest(partner, deps);
    // The rate-limit headers go on whatever this request is answered with, refusals included.
    const reply =
      count.refusal === undefined
        ? await route
            .handle({ request, params, partner }, deps)
            .catch((error: unknown) => replyToFailure(error, requestId, deps.onError))
        : replyToFailure(count.refusal, requestId, deps.onError);
    return withHeaders(reply, count.headers);
  }

  return {
    environment: deps.environment,
    events: deps.events,
    async handle(request) {
      const given = request.requestId;
      const requestId = given !== undefined && acceptableRequestId(given) ? given : nextRequestId();
      const reply = await dispatch(request, requestId).catch((error: unknown) =>
        replyToFailure(error, requestId, deps.onError),
      );
      return render(reply, requestId, request.method === "HEAD");
    },
    ready: () => Promise.resolve(open),
    async close() {
      open = false;
      const { events, rateLimiter, keys, partners, products, positions, prices } = deps;
      const closables = new Set<object>([events, rateLimiter, keys, partners, products, positions, prices]);
      await Promise.all(
        [...closables].map((c) => ("close" in c && typeof c.close === "function" ? c.close() : undefined)),
      );
    },
  };
}
