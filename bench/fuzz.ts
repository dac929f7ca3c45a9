/**
 * `pnpm fuzz`: the generated-request fuzzing of test/fuzz.test.ts, as long as you like (not part of
 * the default test run). Requests go to `handle()` in process and, a share of them, as raw bytes to
 * a real server on 127.0.0.1 (an ephemeral port, closed at the end); the checks are those of
 * test/support/request-fuzz.ts. Prints progress every N runs, then the seed, the counts per outcome
 * and per generator family, and the time. A failure prints the request, the answer, the seed and
 * the fast-check path, and exits 1.
 *
 *   pnpm fuzz --runs 200000                 # 80 % in process, 20 % over sockets
 *   pnpm fuzz --runs 5000 --seed 42         # or FC_SEED=42; with FC_PATH, replays one failure
 *   pnpm fuzz --help
 */
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { startServer } from "../packages/node-adapter/src/index.js";
import {
  createFuzzTarget,
  exchange,
  type FuzzRequest,
  fuzzRequest,
  parseResponse,
  runInProcess,
  runOverSocket,
  Tally,
} from "../test/support/request-fuzz.js";
import { intFlagOf, parseFlags } from "./cli-flags.js";

const HELP = `pnpm fuzz [--runs N] [--seed S] [--progress N] [--socket-share F]

  --runs N          generated requests in all (default 20000)
  --seed S          fast-check seed (default: FC_SEED, else random); printed either way
  --progress N      a progress line every N requests (default 10000)
  --socket-share F  share of the requests sent over sockets to a real server (default 0.2)
  FC_PATH           with the seed of a failure, replays it
`;

const values = parseFlags("fuzz", HELP, {
  runs: { type: "string" },
  seed: { type: "string" },
  progress: { type: "string" },
  "socket-share": { type: "string" },
});
const integer = intFlagOf("fuzz");
const runs = integer("runs", values.runs, 20_000, 1, 1_000_000_000);
const seed = integer(
  "seed",
  values.seed ?? (process.env["FC_SEED"] || undefined),
  Math.floor(Math.random() * 2 ** 31),
  -(2 ** 31),
  2 ** 31 - 1,
);
const every = integer("progress", values.progress, 10_000, 1, 1_000_000_000);
const share = Number(values["socket-share"] ?? "0.2");
if (values["socket-share"]?.trim() === "" || !(share >= 0 && share <= 1)) {
  process.stderr.write("fuzz: --socket-share must be a number from 0 to 1; see --help\n");
  process.exit(2);
}
const path = process.env["FC_PATH"] || undefined;
const socketRuns = Math.round(runs * share);
const inProcessRuns = runs - socketRuns;

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
const inProcess = createFuzzTarget(FIXTURES);
const overSockets = createFuzzTarget(FIXTURES);
const server = await startServer({ api: overSockets.api, port: 0, log: "none" });
const tally = new Tally();
const started = performance.now();
let done = 0;
function progress(): void {
  done++;
  if (done % every === 0) {
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`fuzz: ${done}/${runs} requests, ${seconds.toFixed(1)} s, seed ${seed}\n`);
  }
}

process.stdout.write(
  `fuzz: seed ${seed}, ${inProcessRuns} in process, ${socketRuns} over sockets (port ${server.port})\n`,
);
let failed = false;
try {
  const params = { seed, includeErrorInReport: true, ...(path === undefined ? {} : { path }) };
  if (inProcessRuns > 0)
    await fc.assert(
      fc.asyncProperty(fuzzRequest, async (request: FuzzRequest) => {
        await runInProcess(inProcess, request, tally);
        progress();
      }),
      { ...params, numRuns: inProcessRuns },
    );
  if (socketRuns > 0)
    await fc.assert(
      fc.asyncProperty(fuzzRequest, async (request: FuzzRequest) => {
        await runOverSocket(server.port, overSockets, request, tally);
        progress();
      }),
      { ...params, numRuns: socketRuns },
    );
  const health = parseResponse(
    await exchange(server.port, Buffer.from("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
    false,
  );
  if (health?.status !== 200)
    throw new Error(`/healthz answered ${health?.status ?? "nothing"} after the run`);
} catch (error) {
  failed = true;
  process.stderr.write(
    `fuzz: FAILED (seed ${seed})\n${error instanceof Error ? error.message : String(error)}\n`,
  );
} finally {
  await server.close();
}
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify(
    {
      seed,
      requests: tally.total,
      in_process: Math.min(tally.total, inProcessRuns),
      over_sockets: Math.max(0, tally.total - inProcessRuns),
      seconds: Number(seconds.toFixed(1)),
      events_stored: inProcess.events.size + overSockets.events.size,
      healthz_after: failed ? "not checked" : 200,
      outcomes: tally.sorted(tally.byOutcome),
      families: tally.sorted(tally.byFamily),
    },
    null,
    2,
  )}\n`,
);
process.exitCode = failed ? 1 : 0;
