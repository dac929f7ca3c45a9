/**
 * The API test suite, written once as a factory (as hono does with `runTest({ newRouter })`):
 * `runApiSuite(name, mount, backend?)` runs every endpoint, error code and status of the contract
 * against whatever `mount` puts the API behind — `handle()` in process (`inProcess`), a real
 * node:http server, a framework's app — on the sandbox fixtures in memory, or on the stores of a
 * durable `backend`. One file per endpoint or concern; each takes the shared target from
 * `SuiteContext`.
 */
import { after, before, describe } from "node:test";
import { MemoryRateLimiter } from "@partner-yield/core";
import { authenticationSuite } from "./authentication.js";
import { backingServicesSuite } from "./backing-services.js";
import { basePathSuite } from "./base-path.js";
import { eventsSuite } from "./events.js";
import { positionSuite } from "./position.js";
import { productsSuite } from "./products.js";
import { rateLimitSuite } from "./rate-limits.js";
import { routingSuite } from "./routing.js";
import { type ApiBackend, type Mount, start, type Target } from "./target.js";
import { yieldCalcSuite } from "./yield-calc.js";

export {
  type ApiBackend,
  inProcess,
  type Mount,
  type Mounted,
  type SentRequest,
  type SentResponse,
} from "./target.js";

export function runApiSuite(name: string, mount: Mount, backend?: ApiBackend): void {
  describe(`API suite: ${name}`, () => {
    let shared: Target | undefined;
    before(async () => {
      shared = await start(mount, backend);
    });
    after(async () => {
      await shared?.close();
    });
    const target = (): Target => {
      if (shared === undefined) throw new Error("the API suite's target is not started");
      return shared;
    };
    // Delegates to the target started in `before`, so each part can take it when it is defined.
    const t: Target = {
      get api() {
        return target().api;
      },
      send: (request) => target().send(request),
      close: () => target().close(),
      get: (path, key) => target().get(path, key),
      postEvent: (body, overrides, path) => target().postEvent(body, overrides, path),
    };
    const suite = {
      t,
      start: (options?: Parameters<typeof start>[2]) => start(mount, backend, options),
      newLimiter: async () => (await backend?.rateLimiter()) ?? new MemoryRateLimiter(),
    };
    routingSuite(suite);
    authenticationSuite(suite);
    productsSuite(suite);
    positionSuite(suite);
    yieldCalcSuite(suite);
    eventsSuite(suite);
    rateLimitSuite(suite);
    backingServicesSuite(suite);
    basePathSuite(suite);
  });
}
