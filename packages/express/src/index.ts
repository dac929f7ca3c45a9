/**
 * @partner-yield/express: the partner API as an Express 5 middleware, mounted under a path beside
 * the app's own routes.
 * @module
 */
export {
  type MountedApi,
  type MountedRequest,
  type PartnerYieldMiddleware,
  type PartnerYieldOptions,
  partnerYield,
} from "./partner-yield.js";
