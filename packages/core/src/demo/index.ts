/**
 * @partner-yield/core/demo — the sandbox demo credentials published in the README, and the record
 * that lets the demo production key answer 401 `wrong_environment` on a sandbox. Its own entry
 * point, not the root: a server imports it to refuse these credentials in production, a test
 * to use them, and neither needs them among the API's names.
 * @module
 */
export { DEMO_CREDENTIALS, DEMO_PRODUCTION_KEY_ROW, withDemoProductionKey } from "./credentials.js";
