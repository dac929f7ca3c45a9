/**
 * The API suite on the core alone: `handle()` called directly, no socket. It runs here, not in the
 * core's tests, because the suite lives in this package's testing entry (it reads the fixtures
 * from disk and runs on node:test), and the core may not depend on this package.
 */
import { inProcess, runApiSuite } from "@partner-yield/node-adapter/testing";

runApiSuite("in-process handle()", inProcess);
