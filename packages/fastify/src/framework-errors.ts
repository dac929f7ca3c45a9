/**
 * The `frameworkErrors` server option for an app that mounts the plugin. Fastify decodes the URL
 * before routing and answers what it cannot decode (`FST_ERR_BAD_URL`, e.g.
 * `/yield/v1/products/%00%E2%82%AC..%2F%FF`) or a parameter too long for it
 * (`FST_ERR_MAX_PARAM_LENGTH`) itself, in its own JSON, before any plugin's route or hook: only a
 * server option can reach those requests.
 * @module
 */
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from "fastify";
import { mountOf } from "./mounts.js";
import { replyFromCore } from "./reply-from-core.js";

/** Fastify's `frameworkErrors` server option. */
export type FrameworkErrorsHandler = NonNullable<FastifyServerOptions["frameworkErrors"]>;

/** What answers the framework errors that are not the API's (an app's own `frameworkErrors` fits). */
export type FrameworkErrorsFallback = (
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) => void;

/** The routing errors answered by the core when their URL falls under a mount. */
const ROUTING_ERRORS = new Set(["FST_ERR_BAD_URL", "FST_ERR_MAX_PARAM_LENGTH"]);

/**
 * A `frameworkErrors` handler: a URL Fastify cannot route under a path where the plugin is
 * registered is answered by the core, exactly as the node listener answers it (the core routes the
 * path as received: `404 not_found`, or `404 product_not_found` after authentication, in
 * problem+json). Every other framework error goes to `fallback`, or, without one, to the app's
 * error handler (`reply.send(error)`: Fastify's own answer, unchanged, unless the app set one).
 *
 * @example
 * const app = Fastify({ frameworkErrors: partnerYieldFrameworkErrors() });
 * await app.register(partnerYield, { api, prefix: "/yield/v1" });
 */
export function partnerYieldFrameworkErrors(fallback?: FrameworkErrorsFallback): FrameworkErrorsHandler {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const mount = ROUTING_ERRORS.has(error.code)
      ? mountOf(request.server.server, request.raw.url ?? "/")
      : undefined;
    if (mount !== undefined) {
      void replyFromCore(mount.api, request, reply);
      return;
    }
    if (fallback !== undefined) {
      fallback(error, request, reply);
      return;
    }
    reply.send(error);
  };
}
