/**
 * A fault-injecting target: the embedded server with one fault (or one alternative way of
 * resolving interface.md's gaps) wrapped around its handler.
 * @module
 */
import { type DemoCredentials, type EmbeddedTarget, startEmbeddedTarget } from "../embedded.js";
import type { Fault } from "./faults.js";
import type { FaultContext } from "./interceptors.js";

/** Anything that wraps the API's handler: a fault, an alternative, several composed. */
export interface HandlerWrapper {
  readonly wrap: Fault["wrap"];
  /** Per-minute quota of the server (the probe fault wants a small one). */
  readonly quota?: number;
}

/** Starts the embedded server with `fault` (or clean, without one). */
export function startFaultyTarget(
  fault: HandlerWrapper | undefined,
  options: { credentials?: DemoCredentials; quota?: number } = {},
): Promise<EmbeddedTarget> {
  const quota = options.quota ?? fault?.quota;
  return startEmbeddedTarget({
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(quota === undefined ? {} : { quota }),
    ...(fault === undefined
      ? {}
      : {
          wrap: (api, fixtures) => {
            const { credentials, data } = fixtures;
            const context: FaultContext = {
              apiKey: credentials.sandboxApiKey,
              signingSecret: credentials.signingSecret,
              productionApiKey: credentials.productionApiKey,
              otherPartnerApiKey: credentials.otherPartnerSandboxApiKey,
              revokedApiKey: credentials.revokedSandboxApiKey ?? "",
              foreignSlug: fixtures.foreignSlug ?? "",
              products: new Map(
                data.productRecords
                  .filter((p) => p.partnerId === credentials.partnerId)
                  .map((p) => [p.slug, p]),
              ),
            };
            return fault.wrap(api, context);
          },
        }),
  });
}
