/**
 * A fault-injecting target: the embedded server with one fault wrapped around its handler.
 * @module
 */
import { type DemoCredentials, type EmbeddedTarget, startEmbeddedTarget } from "../embedded.js";
import type { Fault, FaultContext } from "./faults.js";

/** Starts the embedded server with `fault` (or clean, without one). */
export function startFaultyTarget(
  fault: Fault | undefined,
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
