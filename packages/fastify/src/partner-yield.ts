/**
 * The Fastify 5 plugin: the partner API answers every method under its mount path, the bare path
 * included, in an encapsulated scope of its own. Nothing here changes the app's other routes: the
 * content-type parsers are replaced only in this scope, and only Fastify's own refusals of this
 * scope's requests are taken over.
 * @module
 */
import type { PartnerApi } from "@partner-yield/core";
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
} from "fastify";
import { addMount } from "./mounts.js";
import { replyFromCore } from "./reply-from-core.js";

/** The API to mount: a `PartnerApi`, or any handler that says where it answers. */
export type MountedApi = Pick<PartnerApi, "handle" | "basePath">;

export interface PartnerYieldOptions {
  /**
   * The API (`createPartnerApi`). Its `basePath` is where it answers: register the plugin with that
   * path as `prefix` (or under a prefix that begins it).
   */
  readonly api: MountedApi;
}

/**
 * Fastify's refusals of a request before its handler runs that the core answers instead, as the
 * node listener would (the core checks the Content-Type itself, after authentication).
 */
const REFUSED_BEFORE_HANDLER = new Set([
  "FST_ERR_CTP_INVALID_MEDIA_TYPE",
  "FST_ERR_ROUTE_MISSING_CONTENT_TYPE",
]);

async function plugin(instance: FastifyInstance, options: PartnerYieldOptions): Promise<void> {
  const { api } = options;
  const path = routePath(instance.prefix, api.basePath);
  // The core reads the raw body itself, after authentication and the rate limit, with its limit,
  // and verifies the signature over exactly those bytes (CONTRACT §5): no parser in this scope
  // reads it. The app's own parsers, outside this scope, are untouched.
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser("*", (_request, _payload, done) => done(null));
  instance.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (REFUSED_BEFORE_HANDLER.has(error.code)) return replyFromCore(api, request, reply);
    // Anything else (an app hook's error) is the app's to answer.
    throw error;
  });
  const handler = (request: FastifyRequest, reply: FastifyReply) => replyFromCore(api, request, reply);
  // `/` under a prefix is the prefix itself and the prefix with `/` (prefixTrailingSlash "both").
  instance.all(path === "" ? "/" : path, handler);
  instance.all(`${path}/*`, handler);
  addMount(instance.server, { path: api.basePath, api });
}

/**
 * The route path, below the scope's prefix, of an API answering under `basePath`.
 * @throws Error when the prefix is not `basePath` or a leading part of it.
 */
function routePath(prefix: string, basePath: string): string {
  const scope = prefix.replace(/\/+$/, "");
  if (basePath === scope || basePath.startsWith(`${scope}/`)) return basePath.slice(scope.length);
  throw new Error(
    `@partner-yield/fastify: the API answers under ${JSON.stringify(basePath)} but is registered under ` +
      `the prefix ${JSON.stringify(scope)}: build it with createPartnerApi({ basePath: ${JSON.stringify(scope)}, … }) ` +
      `or register it with { prefix: ${JSON.stringify(basePath)} }`,
  );
}

/**
 * The plugin. Encapsulated on purpose (no `fastify-plugin`): its content-type parsers and error
 * handler apply to its own routes only.
 *
 * @example
 * const api = createPartnerApi({ environment: "sandbox", ...data, basePath: "/yield/v1" });
 * const app = Fastify({ frameworkErrors: partnerYieldFrameworkErrors() });
 * await app.register(partnerYield, { api, prefix: "/yield/v1" });
 */
export const partnerYield: FastifyPluginAsync<PartnerYieldOptions> = Object.assign(plugin, {
  // What fastify-plugin would declare, without its skip-override: the Fastify versions it runs on.
  [Symbol.for("plugin-meta")]: { name: "@partner-yield/fastify", fastify: "5.x" },
  [Symbol.for("fastify.display-name")]: "@partner-yield/fastify",
});
