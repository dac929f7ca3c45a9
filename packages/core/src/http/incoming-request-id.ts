/**
 * Which request ids chosen outside the core (a client's `X-Request-Id`, an embedder's
 * `PlainRequest.requestId`) may be used: the id is echoed in `X-Request-Id`, a problem's
 * `request_id` and the request log, so it must be short, plain, and never a credential.
 * @module
 */

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** The prefixes of API keys (`ypk_test_`, `ypk_live_`) and signing secrets (`whsec_`), any case. */
const SECRET_PREFIX = /ypk_|whsec_/i;

/**
 * True for 1–128 characters of `A-Z a-z 0-9 . _ : -` that contain no API-key or signing-secret
 * prefix (`ypk_`, `whsec_`, in any case): such an id is replaced by a generated one, so a secret
 * sent there by mistake is neither echoed nor logged.
 * @example acceptableRequestId("trace-42:a.b_c"); // true
 * @example acceptableRequestId("ypk_test_4eC39HqLyjWDarjtT1zdp7dc…"); // false
 */
export function acceptableRequestId(id: string): boolean {
  return SANE_REQUEST_ID.test(id) && !SECRET_PREFIX.test(id);
}
