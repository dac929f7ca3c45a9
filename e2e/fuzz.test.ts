/**
 * Generated whole requests against `handle()` in process and against a real server over sockets
 * (e2e/support/request-fuzz.ts says what is generated and checked), among them, one run in 31,
 * slow bodies interleaved with revocations. The default run makes 3,800 runs in process, 1,200 over
 * sockets to 127.0.0.1 and 300 to ::1 (skipped, with a notice, where the machine has no IPv6
 * loopback); `pnpm fuzz --runs N` runs more. FC_SEED reproduces a run (CI runs with a fixed
 * seed, see `fcParams` of @partner-yield/core/testing); a failure prints its seed and path.
 * That the generators reach the deep steps of CONTRACT §5 is not counted in a random run: requests
 * of each kind that must reach a step are generated on their own, and each must be answered there;
 * so are slow bodies with each kind of revocation while they arrive.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { DEMO_CREDENTIALS as DEMO } from "../packages/core/src/demo/index.js";
import { ERRORS, type ErrorCode, EVENT_TYPES } from "../packages/core/src/index.js";
import { fcParams } from "../packages/core/src/testing/index.js";
import type { RunningServer } from "../packages/node-adapter/src/index.js";
import {
  clientAddress,
  createFuzzTarget,
  type EventTextParts,
  eventTextOf,
  exchange,
  type FuzzRequest,
  type FuzzTarget,
  fuzzStep,
  type Listening,
  parseResponse,
  runInProcess,
  runSlowScenario,
  runStep,
  type SignedEventParts,
  type SlowEvent,
  type SlowEventParts,
  type SlowStep,
  signedEventOf,
  slowEventOf,
  startFuzzServer,
  Tally,
} from "./support/request-fuzz.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
const IN_PROCESS_RUNS = runsFromEnv("FUZZ_IN_PROCESS_RUNS", 3800);
const SOCKET_RUNS = runsFromEnv("FUZZ_SOCKET_RUNS", 1200);
const IPV6_RUNS = runsFromEnv("FUZZ_IPV6_RUNS", 300);

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
let listening: Listening;

before(async () => {
  socketTarget = createFuzzTarget(FIXTURES);
  const started = await startFuzzServer(socketTarget, "127.0.0.1");
  if (typeof started === "string") throw new Error(started);
  ({ server, listening } = started);
});
after(() => server.close());

test(`property: ${IN_PROCESS_RUNS} generated requests and slow bodies to handle(): never a 5xx, always the envelope, refusals change nothing`, async () => {
  const target = createFuzzTarget(FIXTURES);
  const tally = new Tally();
  await fc.assert(
    fc.asyncProperty(fuzzStep, (step) => runStep(target, step, tally)),
    { ...fcParams(process.env), numRuns: IN_PROCESS_RUNS, includeErrorInReport: true },
  );
  assert.ok(tally.total >= IN_PROCESS_RUNS);
});

/** 1–40 visible ASCII characters: an Idempotency-Key CONTRACT §5 accepts. */
const idempotencyKey = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 40,
});

/** `data` whose numbers are all 32-bit integers, so none is refused as inexact. */
const exactData = fc.dictionary(
  fc.string({ maxLength: 8 }),
  fc.oneof(
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 4 }), fc.string(), { maxKeys: 3 }),
  ),
  { maxKeys: 6 },
);

/** A body the schema accepts, unless `parts` say otherwise. */
const rightBody = (parts: Partial<EventTextParts> = {}) =>
  eventTextOf({
    type: fc.constantFrom(...EVENT_TYPES),
    occurredAt: fc.constantFrom("2026-11-20T10:15:00Z", "2026-11-20T10:15:00.123+05:30"),
    data: exactData,
    mutation: fc.constant("none"),
    ...parts,
  });

/** A signed event the sandbox accepts, unless `parts` say otherwise. */
const rightEvent = (parts: Partial<SignedEventParts> = {}) =>
  signedEventOf({
    body: rightBody(),
    key: fc.constant(DEMO.sandboxApiKey),
    signing: fc.constantFrom("right", "rotated", "prefixed", "upper"),
    idempotencyKey,
    eventHeader: fc.constant("match"),
    contentType: fc.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      'Application/JSON;charset="UTF-8"',
    ),
    extra: fc.constant([]),
    omitIdempotency: fc.constant(false),
    ...parts,
  });

/** The same body with one more member in `data` (its keys are at most 8 characters long). */
function anotherBody(body: { text: string; type: string; mutation: string }) {
  const event = JSON.parse(body.text) as { data: Record<string, unknown> };
  return { ...body, text: JSON.stringify({ ...event, data: { ...event.data, "second body": true } }) };
}

/**
 * Requests that must reach each deep step of CONTRACT §5, as sequences: every request but the
 * last is accepted (200), the last is answered with the code.
 */
const REACHING: readonly (readonly [ErrorCode | "accepted", fc.Arbitrary<readonly FuzzRequest[]>])[] = [
  ["accepted", rightEvent().map((r) => [r])],
  ["invalid_signature", rightEvent({ signing: fc.constantFrom("wrong", "other") }).map((r) => [r])],
  [
    "invalid_json",
    rightEvent({
      body: rightBody().chain((b) =>
        // Every proper prefix of an object's text is cut before its closing brace.
        fc
          .integer({ min: 1, max: b.text.length - 1 })
          .map((n) => ({ ...b, text: b.text.slice(0, n), mutation: "truncate" })),
      ),
    }).map((r) => [r]),
  ],
  [
    "invalid_event",
    rightEvent({
      body: fc.oneof(
        rightBody({ mutation: fc.constantFrom("extra", "data-not-object") }),
        rightBody({
          occurredAt: fc.constantFrom(
            "2026-02-29T00:00:00Z",
            "2026-11-20 10:15:00Z",
            "2026-11-20T10:15:00",
            "",
          ),
        }),
      ),
    }).map((r) => [r]),
  ],
  ["event_type_mismatch", rightEvent({ eventHeader: fc.constant("other") }).map((r) => [r])],
  [
    "idempotency_key_reused",
    fc
      .tuple(rightBody(), idempotencyKey)
      .chain(([body, key]) =>
        fc.tuple(
          rightEvent({ body: fc.constant(body), idempotencyKey: fc.constant(key) }),
          rightEvent({ body: fc.constant(anotherBody(body)), idempotencyKey: fc.constant(key) }),
        ),
      ),
  ],
];

for (const [code, sequences] of REACHING) {
  const last = code === "accepted" ? "200" : `${ERRORS[code].status} ${code}`;
  test(`property: generated requests that must be answered ${last} are, with every check of the run above`, async () => {
    const target = createFuzzTarget(FIXTURES);
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(sequences, async (sequence) => {
        // One target for every case: each case's keys get a prefix of their own.
        const prefix = `case-${cases++}-`;
        const tally = new Tally();
        for (const request of sequence) {
          const headers = request.headers.map(([name, value]): [string, string] =>
            name === "Idempotency-Key" ? [name, prefix + value] : [name, value],
          );
          await runInProcess(target, { ...request, headers }, tally);
        }
        const expected = new Map([[last, 1]]);
        if (sequence.length > 1) expected.set("200", sequence.length - 1);
        assert.deepEqual(tally.byOutcome, expected);
      }),
      { ...fcParams(process.env), includeErrorInReport: true },
    );
  });
}

test(`property: ${SOCKET_RUNS} generated requests and slow bodies as raw bytes to a real server: the same, and /healthz answers after`, async () => {
  const tally = new Tally();
  await fc.assert(
    fc.asyncProperty(fuzzStep, (step) => runStep(socketTarget, step, tally, listening)),
    { ...fcParams(process.env), numRuns: SOCKET_RUNS, includeErrorInReport: true },
  );
  assert.ok(tally.total >= SOCKET_RUNS);
  const health = parseResponse(
    await exchange(server.port, Buffer.from("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
    false,
  );
  assert.equal(health?.status, 200);
});

test(`property: ${IPV6_RUNS} generated requests and slow bodies to a server on [::1]: the same, failures counted in ::/64`, async (t) => {
  const target = createFuzzTarget(FIXTURES);
  const started = await startFuzzServer(target, "::1");
  if (typeof started === "string") {
    const notice = `no IPv6 loopback here, the [::1] run is skipped (${started})`;
    process.stdout.write(`# ${notice}\n`);
    t.skip(notice);
    return;
  }
  try {
    const tally = new Tally();
    await fc.assert(
      fc.asyncProperty(fuzzStep, (step) => runStep(target, step, tally, started.listening)),
      { ...fcParams(process.env), numRuns: IPV6_RUNS, includeErrorInReport: true },
    );
    assert.ok(tally.total >= IPV6_RUNS);
  } finally {
    await started.server.close();
  }
});

/** One slow event: its head, then `during(event)`, then its pieces (unless `after` says otherwise). */
function oneSlowEvent(
  parts: Partial<SlowEventParts>,
  during: (event: SlowEvent) => SlowStep[],
  after: SlowStep[] = [],
) {
  return fc
    .tuple(slowEventOf({ key: fc.constant("demo"), truncated: fc.constant(false), ...parts }), clientAddress)
    .map(([event, client]) => ({
      events: [event],
      client,
      steps: [
        { kind: "start", event: 0 } as SlowStep,
        ...during(event),
        ...event.pieces.map((_, piece): SlowStep => ({ kind: "piece", event: 0, piece })),
        ...after,
      ],
    }));
}

const revokeSigner = (e: SlowEvent): SlowStep[] => [{ kind: "secret", secret: e.signer, active: false }];

/** Slow bodies that must end in each answer of the model: each kind of revocation while they arrive. */
const SLOW_REACHING = [
  [
    "401 invalid_api_key",
    "the key revoked while the body arrives",
    oneSlowEvent({}, () => [{ kind: "key", key: "demo", active: false }]),
  ],
  [
    "401 invalid_signature",
    "the signing secret revoked while the body arrives",
    oneSlowEvent({ signer: fc.constantFrom("demo", "rotated") }, revokeSigner),
  ],
  [
    "200",
    "the other secret revoked while the body arrives",
    oneSlowEvent({ signer: fc.constant("demo") }, () => [
      { kind: "secret", secret: "rotated", active: false },
    ]),
  ],
  [
    "200",
    "rotated to a fresh secret, which signed, while the body arrives",
    oneSlowEvent({ signer: fc.constant("fresh") }, () => [
      { kind: "secret", secret: "fresh", active: true },
      { kind: "secret", secret: "demo", active: false },
      { kind: "secret", secret: "rotated", active: false },
    ]),
  ],
  [
    "200",
    "the key revoked and restored while the body arrives",
    oneSlowEvent({ signer: fc.constantFrom("demo", "rotated") }, () => [
      { kind: "key", key: "demo", active: false },
      { kind: "key", key: "demo", active: true },
    ]),
  ],
  [
    "200",
    "the secret revoked after the answer",
    oneSlowEvent({ signer: fc.constantFrom("demo", "rotated") }, () => [], [
      { kind: "secret", secret: "demo", active: false },
      { kind: "secret", secret: "rotated", active: false },
    ]),
  ],
  [
    "401 invalid_api_key",
    "a key not active when the head arrives",
    oneSlowEvent({ key: fc.constant("fresh") }, () => []),
  ],
] as const;

for (const [expected, what, scenarios] of SLOW_REACHING) {
  test(`property: slow bodies, ${what}: ${expected} in process and over a socket, with every check of the runs above`, async () => {
    const target = createFuzzTarget(FIXTURES);
    await fc.assert(
      fc.asyncProperty(scenarios, fc.boolean(), async (scenario, overSocket) => {
        const tally = new Tally();
        if (overSocket) await runSlowScenario(socketTarget, scenario, tally, listening);
        else await runSlowScenario(target, scenario, tally);
        assert.deepEqual(tally.byOutcome, new Map([[expected, 1]]));
      }),
      { ...fcParams(process.env), numRuns: 40, includeErrorInReport: true },
    );
  });
}
