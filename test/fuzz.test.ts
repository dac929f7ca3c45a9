/**
 * Generated whole requests against `handle()` in process and against a real server over sockets
 * (test/support/request-fuzz.ts says what is generated and checked). The default run sends 3,800
 * requests in process and 1,200 over sockets; `pnpm fuzz --runs N` runs more. FC_SEED reproduces a
 * run (CI runs with a fixed seed, see packages/core/test/fc-config.ts); a failure prints its seed and path.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { fcParams } from "../packages/core/test/fc-config.js";
import { type RunningServer, startServer } from "../packages/node-adapter/src/index.js";
import {
  createFuzzTarget,
  exchange,
  type FuzzTarget,
  fuzzRequest,
  parseResponse,
  runInProcess,
  runOverSocket,
  Tally,
} from "./support/request-fuzz.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
const IN_PROCESS_RUNS = runsFromEnv("FUZZ_IN_PROCESS_RUNS", 3800);
const SOCKET_RUNS = runsFromEnv("FUZZ_SOCKET_RUNS", 1200);

/** A run count from the environment: a positive integer, or the run stops here (not 0 runs that pass). */
function runsFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const runs = Number(raw);
  if (!Number.isSafeInteger(runs) || runs < 1 || !/^\d+$/.test(raw)) {
    throw new Error(
      `${name} must be a positive integer (a number of generated requests), got ${JSON.stringify(raw)}`,
    );
  }
  return runs;
}

let socketTarget: FuzzTarget;
let server: RunningServer;

before(async () => {
  socketTarget = createFuzzTarget(FIXTURES);
  server = await startServer({ api: socketTarget.api, port: 0, log: "none" });
});
after(() => server.close());

test(`property: ${IN_PROCESS_RUNS} generated requests to handle(): never a 5xx, always the envelope, refusals change nothing`, async () => {
  const target = createFuzzTarget(FIXTURES);
  const tally = new Tally();
  await fc.assert(
    fc.asyncProperty(fuzzRequest, (request) => runInProcess(target, request, tally)),
    { ...fcParams(), numRuns: IN_PROCESS_RUNS, includeErrorInReport: true },
  );
  assert.ok(tally.total >= IN_PROCESS_RUNS);
  // The generators reach the deep steps, not only the first refusals.
  const seen = [...tally.byOutcome.keys()].join(" ");
  for (const code of [
    "200",
    "invalid_json",
    "invalid_event",
    "invalid_signature",
    "event_type_mismatch",
    "idempotency_key_reused",
  ])
    assert.ok(seen.includes(code), `no ${code} in ${seen}`);
});

test(`property: ${SOCKET_RUNS} generated requests as raw bytes to a real server: the same, and /healthz answers after`, async () => {
  const tally = new Tally();
  await fc.assert(
    fc.asyncProperty(fuzzRequest, (request) => runOverSocket(server.port, socketTarget, request, tally)),
    { ...fcParams(), numRuns: SOCKET_RUNS, includeErrorInReport: true },
  );
  assert.ok(tally.total >= SOCKET_RUNS);
  const health = parseResponse(
    await exchange(server.port, Buffer.from("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
    false,
  );
  assert.equal(health?.status, 200);
});
