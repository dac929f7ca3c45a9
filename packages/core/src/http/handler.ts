/**
 * The shape of an endpoint's handler: the call (request, path parameters, and the authenticated
 * partner where the route needs a key) and the resolved dependencies in, a `Reply` out. A refusal
 * is thrown as an `ApiError` and answered in one place.
 * @module
 */
import type { Partner } from "../stores/partner-store.js";
import type { ApiDependencies } from "./dependencies.js";
import type { PlainRequest } from "./plain-request.js";
import type { Reply } from "./reply.js";

/** Path parameters by name, raw as in the path (e.g. `slug`). */
export type PathParams = Readonly<Record<string, string>>;

/** A call of a route open to anyone (no key). */
export interface PublicCall {
  readonly request: PlainRequest;
  readonly params: PathParams;
}

/** A call of a route that needs a key: authentication and the rate limit have passed. */
export interface PartnerCall extends PublicCall {
  readonly partner: Partner;
  /** The stored hash of the key that authenticated the request (looked up again after a body). */
  readonly keyHash: string;
}

export type PublicHandler = (call: PublicCall, deps: ApiDependencies) => Promise<Reply>;
export type PartnerHandler = (call: PartnerCall, deps: ApiDependencies) => Promise<Reply>;
