/**
 * @partner-yield/fastify: the partner API as a Fastify 5 plugin, mounted under a prefix beside the
 * app's own routes.
 * @module
 */
export {
  type FrameworkErrorsFallback,
  type FrameworkErrorsHandler,
  partnerYieldFrameworkErrors,
} from "./framework-errors.js";
export { type MountedApi, type PartnerYieldOptions, partnerYield } from "./partner-yield.js";
