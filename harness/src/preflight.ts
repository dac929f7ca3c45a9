/**
 * The signing-secret preflight. Before any event check, two events go out: one well-formed and
 * signed with the run's secret, and the same event signed with a random secret. Comparing the two
 * answers tells a wrong secret (both refused alike: a configuration error, exit 2, as for a wrong
 * API key) from a target that refuses events for another reason, and records how the target
 * answers a wrong signature, so no event check passes on a request refused for its signature.
 * @module
 */
import {
  CheckContext,
  type CheckInputs,
  type Discovery,
  excerpt,
  hex,
  isRefusal,
  problemCode,
  type RefusalShape,
  refusalShape,
  type SigningProbe,
} from "./checks/context.js";
import { ConfigError } from "./config.js";
import type { HttpClient } from "./http/client.js";

/** Requests the preflight sends. */
export const PREFLIGHT_REQUESTS = 2;

function describe(shape: RefusalShape): string {
  return `HTTP ${shape.status}${shape.label === undefined ? "" : ` ${shape.label}`}`;
}

/**
 * Runs the preflight. Throws ConfigError when the target cannot tell the run's signature from a
 * wrong one; otherwise returns what the checks need to know.
 */
export async function preflightSigning(
  client: HttpClient,
  inputs: CheckInputs,
  discovery: Discovery,
  secretSource: string,
): Promise<SigningProbe> {
  const t = new CheckContext("PREFLIGHT", inputs, discovery, client, "status");
  const body = t.newEvent("partner.user.created", { preflight: true });
  const signed = await t.postEvent({ body });
  const wrong = await t.postEvent({ body, signature: { secret: `whsec_${hex(t.randomBytes(24))}` } });
  if (signed.response === undefined || signed.response.status >= 500 || wrong.response === undefined)
    return { badSignature: undefined, eventRefusal: undefined };
  const badSignature = isRefusal(wrong) ? refusalShape(wrong) : undefined;
  if (!isRefusal(signed)) return { badSignature, eventRefusal: undefined };
  const shape = refusalShape(signed);
  const wrongSecret =
    problemCode(signed) === "invalid_signature" ||
    (badSignature !== undefined &&
      shape.status === badSignature.status &&
      shape.label === badSignature.label);
  if (wrongSecret) {
    throw new ConfigError(
      `the target refused an event signed with ${secretSource} (${describe(shape)}) exactly as it refuses one signed with ` +
        `a random secret: check ${secretSource} (the event signing secret of the partner that owns the API key, ` +
        `for this environment). The target answered: ${excerpt(signed.response.text, 200)}`,
    );
  }
  return { badSignature, eventRefusal: `${describe(shape)}: ${excerpt(signed.response.text, 120)}` };
}
