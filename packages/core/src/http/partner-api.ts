/**
 * The partner API as one pure entry point: `handle(request) → response` (CONTRACT §3–§9).
 * No sockets, no framework: adapters translate to and from `PlainRequest` / `PlainResponse`.
 * Each request: route (404/405) → for partner routes, authenticate (401/429) and count against
 * the rate limit (429) → the route's handler; any error becomes its answer in `replyToFailure`.
 * @module
 */
import type { Environment } from "../auth/environment.js";
import type { EventStore } from "../stores/event-store.js";
import { type AnyAnswer, awaits } from "../stores/maybe-promise.js";
import { keyHash, refuseKey, usableKey } from "./authenticate.js";
import { resolveDependencies } from "./dependencies.js";
import { replyToFailure } from "./failure.js";
import { acceptableRequestId } from "./incoming-request-id.js";
import { buildOpenApiDocument } from "./openapi.js";
import type { PartnerApiOptions } from "./partner-api-options.js";
import type { PartnerApiHandler } from "./plain-request.js";
import { limiterKey, RATE_WINDOW_MS, type RequestCount, requestCount } from "./rate-limit.js";
import { type Reply, render } from "./reply.js";
import { requestIdGenerator } from "./request-id.js";
import { createRouter } from "./router.js";
import { ROUTES } from "./routes.js";

export interface PartnerApi extends PartnerApiHandler {
  readonly environment: Environment;
  /**
   * Where the API answers (`PartnerApiOptions.basePath`, `/api/partner` by default): a framework
   * mount checks that it routes this path to the API.
   */
  readonly basePath: string;
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

  return {
    environment: deps.environment,
    basePath: deps.basePath,
    events: deps.events,
    // One async function for the whole pipeline (not one per step): each extra layer costs a
    // promise, a suspended frame and a reaction per request (docs/performance.md).
    async handle(request) {
      const given = request.requestId;
      const requestId = given !== undefined && acceptableRequestId(given) ? given : nextRequestId();
      // The rate-limit headers go on whatever the request is answered with, refusals included.
      let rateHeaders: RequestCount["headers"] | undefined;
      let reply: Reply;
      // The outcome (`ResponseOutcome`), as far as the request got: fields of the response.
      let routeName: string | undefined;
      let partnerId: string | undefined;
      let keyId: string | undefined;
      try {
        const { route, params, name } = router.match(request.method, request.path);
        routeName = name;
        if (route.access === "public") {
          reply = await route.handle({ request, params }, deps);
        } else {
          // Authentication (authenticate.ts), then the rate limit (rate-limit.ts), in this one frame.
          // A store answers with its value or a promise of it (`MaybePromise`): only a promise is
          // awaited, so a store with the answer at hand (the in-memory ones, a read cache on a hit)
          // costs no suspended frame and no microtask turn. Each `then` is read here, where its
          // load sees one store's answers (`awaits`). A store that throws at once is answered as
          // one whose promise rejects: the catch below.
          // A usable key is served whatever its address's failed-auth count: failures are
          // counted, and answered 429 past the limit, only when the key fails (refuseKey).
          const { rateLimiter, environment } = deps;
          const hash = keyHash(request, deps);
          const lookup = hash.ok ? hash.value : undefined;
          const asked = lookup === undefined ? undefined : deps.keys.findByHash(lookup);
          const record = awaits(asked, (asked as AnyAnswer)?.then) ? await asked : asked;
          if (record !== undefined) {
            partnerId = record.partnerId;
            keyId = record.id;
          }
          let usable = usableKey(record, deps);
          if (usable && deps.keyFormat.verify !== undefined) {
            // A format that checks the key against its record (a salted verifier): false is an unknown key.
            const verified = deps.keyFormat.verify(request.headers["x-api-key"]!, record!);
            usable = awaits(verified, (verified as AnyAnswer)?.then) ? await verified : verified;
          }
          const given = usable ? deps.partners.getPartner(record!.partnerId) : undefined;
          const found = awaits(given, (given as AnyAnswer)?.then) ? await given : given;
          const partner = found ?? (await refuseKey(hash, request.clientAddress, deps));
          const quota = deps.quotaOf(partner);
          const rateKey = limiterKey(partner.id, environment);
          const hit = rateLimiter.hit(rateKey, quota, RATE_WINDOW_MS);
          const decision = awaits(hit, (hit as AnyAnswer)?.then) ? await hit : hit;
          const count = requestCount(environment, quota, decision);
          rateHeaders = count.headers;
          reply =
            count.refusal === undefined
              ? await route.handle({ request, params, partner, keyHash: lookup as string }, deps) // found: it had one
              : replyToFailure(count.refusal, requestId, deps.onError);
        }
      } catch (error) {
        reply = replyToFailure(error, requestId, deps.onError);
      }
      return render(
        reply,
        requestId,
        request.method === "HEAD",
        rateHeaders,
        routeName,
        partnerId,
        keyId,
        deps.environment,
      );
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
