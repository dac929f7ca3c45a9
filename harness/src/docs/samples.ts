/**
 * The sample outputs shown in docs/conformance.md and docs/math.md, produced by real runs against
 * the embedded server with faults injected, so they cannot go stale (a test compares them with the
 * docs). A virtual clock makes them reproducible: durations are the throttle's waits only, and
 * values no run can repeat (request ids, seconds until the rate-limit window resets) print as "…".
 * @module
 */
import fc from "fast-check";
import { embeddedSettings } from "../embedded.js";
import { FAULTS } from "../faults/faults.js";
import { type HandlerWrapper, startFaultyTarget } from "../faults/server.js";
import type { Invocation } from "../invocation.js";
import { rerunCommand } from "../main.js";
import { runApiProperties } from "../properties/api-run.js";
import { principalUnits, rateWad } from "../properties/arbitraries.js";
import type { PropertyDefinition } from "../properties/registry.js";
import { runProperties } from "../properties/run.js";
import { Redactor } from "../redact.js";
import { ConsoleReporter } from "../reporters/console.js";
import { redactorFor, runConformance } from "../runner.js";
import type { Clock } from "../throttle.js";

/** Where the samples pretend to run: a sandbox, from a checkout. */
export const SAMPLE_URL = "https://sandbox.example.com";
const SAMPLE_INVOCATION: Invocation = { conformance: "pnpm conformance", properties: "pnpm properties" };

/** Time that passes only when something waits on it. */
export class VirtualClock implements Clock {
  #now = 0;
  now(): number {
    return this.#now;
  }
  async sleep(ms: number): Promise<void> {
    this.#now += ms;
    await Promise.resolve();
  }
}

function fault(id: string): HandlerWrapper {
  const found = FAULTS.find((f) => f.id === id);
  if (found === undefined) throw new Error(`no fault ${id}`);
  return found;
}

/** Several faults at once (the first innermost). */
export function composed(...wrappers: HandlerWrapper[]): HandlerWrapper {
  return {
    wrap: (api, context) => {
      let handle = api.handle.bind(api);
      for (const w of wrappers) handle = w.wrap({ ...api, handle }, context).handle;
      return { handle };
    },
  };
}

function stable(text: string, baseUrl: string): string {
  return text
    .replaceAll(baseUrl, SAMPLE_URL)
    .replace(/(x-request-id: )\S+/g, "$1…")
    .replace(/("request_id":")[^"]+/g, "$1…")
    .replace(/(ratelimit: "[a-z]+";r=[0-9]+;t=)[0-9]+/g, "$1…");
}

function collector(): { lines: string[]; stream: { write(s: string): void; isTTY: false } } {
  const lines: string[] = [];
  return { lines, stream: { write: (s: string) => void lines.push(s), isTTY: false } };
}

/** The command the conformance sample shows, and its output. */
export const CONFORMANCE_SAMPLE_COMMAND =
  "pnpm conformance --base-url https://sandbox.example.com --only AUTH-01,EVT-04,EVT-22,ERR-02,RL --seed 1278768567";

/** A run against a sandbox that stores a reused Idempotency-Key as a new event, behind a buffering proxy. */
export async function conformanceSample(): Promise<string> {
  const target = await startFaultyTarget(
    composed(fault("reused-key-accepted"), fault("chunked-body-read-whole")),
  );
  try {
    const settings = embeddedSettings(target, {
      embedded: false,
      seed: 1278768567,
      rpm: 90,
      burst: 9,
      only: ["AUTH-01", "EVT-04", "EVT-22", "ERR-02", "RL"],
      otherEnvApiKey: undefined,
      foreignSlug: undefined,
      wallet: undefined,
      fixtures: undefined,
      revokedApiKey: undefined,
      runTag: "ux5dl3-docs",
      clock: new VirtualClock(),
      plan: { yieldSamples: 8, productSample: 10, concurrentDuplicates: 8, probeBudget: 101 },
    });
    const out = collector();
    const reporter = new ConsoleReporter(out.stream, collector().stream, redactorFor(settings));
    const report = await runConformance(settings, {
      onPlan: (plan, s) => reporter.plan(plan, s, "0.1.0"),
      onResult: (result) => reporter.result(result),
    });
    reporter.summary(report, rerunCommand(report, settings, SAMPLE_INVOCATION));
    return [
      "```text",
      `$ ${CONFORMANCE_SAMPLE_COMMAND}`,
      stable(out.lines.join("").trimEnd(), target.baseUrl),
      "```",
    ].join("\n");
  } finally {
    await target.close();
  }
}

/** The command the API properties sample shows. */
export const API_PROPERTIES_SAMPLE_COMMAND =
  "pnpm properties --base-url https://sandbox.example.com --seed 7 --wallet 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

/** `properties --base-url` against a sandbox whose monthly yield is rounded up. */
export async function apiPropertiesSample(): Promise<string> {
  const target = await startFaultyTarget(fault("monthly-rounded-up"));
  try {
    const lines: string[] = [];
    await runApiProperties(
      {
        baseUrl: target.baseUrl,
        apiKey: target.apiKey,
        apiKeySource: "PARTNER_API_KEY",
        runs: 10,
        seed: 7,
        wallet: target.wallet,
        productSample: 8,
        maxRequests: 90,
        rpm: 90,
        burst: 9,
        timeoutMs: 15_000,
        command: SAMPLE_INVOCATION.properties,
        redactor: new Redactor([{ value: target.apiKey, placeholder: "$PARTNER_API_KEY" }]),
        clock: new VirtualClock(),
      },
      (line) => lines.push(line),
    );
    return [
      "```text",
      `$ ${API_PROPERTIES_SAMPLE_COMMAND}`,
      stable(lines.join("\n"), target.baseUrl),
      "```",
    ].join("\n");
  } finally {
    await target.close();
  }
}

/** monthly = annual / 12 rounded up: the mistake P-09 and the digit-for-digit check exist for. */
export const BROKEN_MONTHLY: PropertyDefinition = {
  id: "P-XX",
  title: "monthly as annual / 12 rounded up stays under the exact yield",
  statement: "12 × ceil(annual / 12) ≤ P × n",
  proves: "nothing: it is false, to show the reporting",
  source: "docs",
  property: () =>
    fc.property(principalUnits, rateWad, (p, n) => {
      const exact = p * n;
      const annual = exact >= 0n ? exact / 10n ** 18n : -((-exact + 10n ** 18n - 1n) / 10n ** 18n);
      const monthly = annual >= 0n ? (annual + 11n) / 12n : annual / 12n;
      if (monthly * 12n * 10n ** 18n > exact) throw new Error(`12 × ${monthly} exceeds P × n`);
    }) as fc.IProperty<unknown[]>,
};

/** The in-process suite on a deliberately false property. */
export function propertyFailureSample(): string {
  const lines: string[] = [];
  runProperties(
    [BROKEN_MONTHLY],
    { runs: 500, seed: 7, command: SAMPLE_INVOCATION.properties, now: () => 0 },
    (l) => lines.push(l),
  );
  return ["```text", ...lines, "```"].join("\n");
}
