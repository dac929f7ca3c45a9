/**
 * `pnpm fuzz`: the generated-request fuzzing of e2e/fuzz.test.ts, as long as you like (not part of
 * the default test run). Requests (and, one run in 31, slow bodies interleaved with revocations) go
 * to `handle()` in process and, a share of them, as raw bytes to real servers on 127.0.0.1 and,
 * where the machine has an IPv6 loopback, on ::1 (half of the socket runs each; ephemeral ports,
 * closed at the end; without ::1 a notice says so and 127.0.0.1 takes them all); the checks are
 * those of e2e/support/request-fuzz.ts. Prints progress every N runs, then the seed, the counts
 * per outcome and per generator family, and the time. A failure prints the request (or the slow
 * run's steps), the answer, the seed and the fast-check path, and exits 1.
 *
 *   pnpm fuzz --runs 200000                 # 80 % in process, 20 % over sockets
 *   pnpm fuzz --runs 5000 --seed 42         # or FC_SEED=42; with FC_PATH, replays one failure
 *   pnpm fuzz --help
 */
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import {
  createFuzzTarget,
  exchange,
  type FuzzStep,
  type FuzzTarget,
  fuzzStep,
  type Listening,
  parseResponse,
  runStep,
  startFuzzServer,
  Tally,
} from "../e2e/support/request-fuzz.js";
import { intFlagOf, parseFlags } from "./cli-flags.js";

const HELP = `pnpm fuzz [--runs N] [--seed S] [--progress N] [--socket-share F]

  --runs N          runs in all (default 20000): a generated request each, or
                    one in 31 a slow-body run (a few events, revocations between)
  --seed S          fast-check seed (default: FC_SEED, else random); printed either way
  --progress N      a progress line every N runs (default 10000)
  --socket-share F  share of the runs sent over sockets to real servers (default 0.2;
                    half of them to [::1] where the machine has an IPv6 loopback)
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
const ipv4Server = await startFuzzServer(overSockets, "127.0.0.1");
if (typeof ipv4Server === "string") throw new Error(ipv4Server);
const { server, listening } = ipv4Server;
const overIpv6 = createFuzzTarget(FIXTURES);
const startedIpv6 = await startFuzzServer(overIpv6, "::1");
if (typeof startedIpv6 === "string")
  process.stdout.write(`fuzz: notice: no IPv6 loopback here, the [::1] runs are skipped (${startedIpv6})\n`);
const ipv6 = typeof startedIpv6 === "string" ? undefined : startedIpv6;
const ipv6Runs = ipv6 === undefined ? 0 : Math.floor(socketRuns / 2);
const ipv4Runs = socketRuns - ipv6Runs;
const tally = new Tally();
let slowRuns = 0;
const started = performance.now();
let done = 0;
function progress(): void {
  done++;
  if (done % every === 0) {
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`fuzz: ${done}/${runs} runs, ${seconds.toFixed(1)} s, seed ${seed}\n`);
  }
}

process.stdout.write(
  `fuzz: seed ${seed}, ${inProcessRuns} in process, ${ipv4Runs} over sockets to 127.0.0.1 (port ${server.port}), ${ipv6Runs} to [::1]${ipv6 === undefined ? "" : ` (port ${ipv6.server.port})`}\n`,
);

/** The runs of one phase: in process (`to` undefined) or over sockets to `to`. */
async function phase(target: FuzzTarget, numRuns: number, to?: Listening): Promise<void> {
  if (numRuns === 0) return;
  const params = { seed, includeErrorInReport: true, ...(path === undefined ? {} : { path }) };
  await fc.assert(
    fc.asyncProperty(fuzzStep, async (step: FuzzStep) => {
      if ("slow" in step) slowRuns++;
      await runStep(target, step, tally, to);
      progress();
    }),
    { ...params, numRuns },
  );
}

let failed = false;
try {
  await phase(inProcess, inProcessRuns);
  await phase(overSockets, ipv4Runs, listening);
  if (ipv6 !== undefined) await phase(overIpv6, ipv6Runs, ipv6.listening);
  for (const to of ipv6 === undefined ? [listening] : [listening, ipv6.listening]) {
    const health = parseResponse(
      await exchange(
        to.port,
        Buffer.from("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        to.host,
      ),
      false,
    );
    if (health?.status !== 200)
      throw new Error(`/healthz on ${to.host} answered ${health?.status ?? "nothing"} after the run`);
  }
} catch (error) {
  failed = true;
  process.stderr.write(
    `fuzz: FAILED (seed ${seed})\n${error instanceof Error ? error.message : String(error)}\n`,
  );
} finally {
  await server.close();
  await ipv6?.server.close();
}
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify(
    {
      seed,
      runs: done,
      requests: tally.total,
      slow_body_runs: slowRuns,
      in_process: Math.min(done, inProcessRuns),
      over_sockets: Math.max(0, done - inProcessRuns),
      ipv6_loopback: ipv6 === undefined ? `skipped: ${startedIpv6 as string}` : `${ipv6Runs} runs to [::1]`,
      seconds: Number(seconds.toFixed(1)),
      events_stored: inProcess.events.size + overSockets.events.size + overIpv6.events.size,
      healthz_after: failed ? "not checked" : 200,
      outcomes: tally.sorted(tally.byOutcome),
      families: tally.sorted(tally.byFamily),
    },
    null,
    2,
  )}\n`,
);
process.exitCode = failed ? 1 : 0;
