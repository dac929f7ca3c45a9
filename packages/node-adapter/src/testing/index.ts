/**
 * @partner-yield/node-adapter/testing — what the packages' tests on Node share: a quiet server on
 * an ephemeral port and signed events with the demo credentials, a raw HTTP/1.1 connection, the
 * sandbox in memory, the API suite (every endpoint, error code and status of the contract against
 * a mount of the API: in process, node:http, or a framework of your own), fixtures with private
 * credentials, a TCP proxy to cut a backing service, and `gate` for tests that need PostgreSQL or
 * Redis. Built on node:test and node:assert; imports nothing but the core, this package and
 * `node:*`.
 * @example
 * import { runApiSuite } from "@partner-yield/node-adapter/testing";
 * runApiSuite("my mount", async (api) => mountInMyFramework(api));
 * @module
 */
export {
  type ApiBackend,
  inProcess,
  type Mount,
  type Mounted,
  runApiSuite,
  type SentRequest,
  type SentResponse,
} from "./api-suite/index.js";
export { type PrivateFixtures, privateFixtures } from "./private-fixtures.js";
export { assertProblem, RawConnection, type RawResponse, requestHead } from "./raw-connection.js";
export { DEMO, eventBody, eventHeaders, INBOUND, KEY, startTestServer } from "./requests.js";
export { loadSandbox } from "./sandbox.js";
export { gate } from "./services.js";
export { type ProxyMode, startTcpProxy, type TcpProxy } from "./tcp-proxy.js";
export { eventually, sleep } from "./waiting.js";
