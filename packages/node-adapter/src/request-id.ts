/**
 * Request ids for the answers the adapter gives itself (health checks, protocol refusals, a 500),
 * in the core's shape: `req_` + 12 random hex digits per process + a counter.
 * @module
 */
import { randomBytes } from "node:crypto";

const PREFIX = `req_${randomBytes(6).toString("hex")}`;
let counter = 0;

/** The next adapter request id, e.g. `req_3f9a0c12b4e7000001`. */
export function nextRequestId(): string {
  return `${PREFIX}${(counter++).toString(36).padStart(6, "0")}`;
}
