/**
 * `certify`: the conformance run as a team puts it in its own test suite, against its own mount of
 * the API (a Fastify or Express app, a gateway): the CLI's `run` with every input given and no
 * check skipped but the opt-in ones, in process, its JSON report read back.
 * @module
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Level } from "./checks/types.js";
import { main } from "./main.js";

export interface CertifyOptions {
  /** Where the API answers, path included (e.g. `http://127.0.0.1:3000/yield/v1`). */
  readonly baseUrl: string;
  readonly level: Level;
  /** A sandbox key and its partner's signing secret; a key of the other environment; a revoked key. */
  readonly credentials: {
    readonly apiKey: string;
    readonly signingSecret: string;
    readonly otherEnvApiKey: string;
    /** Without it the revoked-key check is skipped, which fails a certification. */
    readonly revokedApiKey?: string | undefined;
  };
  /** A wallet with positions in the key's partner's products. */
  readonly wallet: string;
  /** The fixture files the deployment serves (the reference level's expectations). */
  readonly fixturesDir: string;
  /** A product slug of another partner (the key's partner must not see it); without it, as above. */
  readonly foreignSlug?: string | undefined;
  /** Requests per minute the run may send; default 3000 (a deployment with a QA quota). */
  readonly rpm?: number | undefined;
}

export interface CertifyResult {
  /** The CLI's exit status: 0 when every check passed. */
  readonly code: number;
  /** What the CLI printed. */
  readonly output: string;
  readonly summary: { passed: number; failed: number; warned: number; skipped: number };
  /** Checks skipped that are not opt-in (RL-03, the quota probe, is): 0 in a full certification. */
  readonly countedSkips: number;
  /** One line per check that did not pass, for an assertion's message. */
  readonly notPassed: string;
}

/**
 * @example
 * const run = await certify({ baseUrl: `${url}/yield/v1`, level: "reference", credentials, wallet, fixturesDir, foreignSlug });
 * assert.equal(run.code, 0, run.notPassed);
 */
export async function certify(options: CertifyOptions): Promise<CertifyResult> {
  const dir = mkdtempSync(join(tmpdir(), "partner-yield-certify-"));
  const json = join(dir, "report.json");
  let output = "";
  const stream = { write: (text: string) => (output += text), isTTY: false };
  try {
    const code = await main(
      [
        "run",
        "--base-url",
        options.baseUrl,
        "--level",
        options.level,
        "--wallet",
        options.wallet,
        "--fixtures",
        options.fixturesDir,
        ...(options.foreignSlug === undefined ? [] : ["--foreign-slug", options.foreignSlug]),
        "--fail-on-skip",
        "--rpm",
        String(options.rpm ?? 3000),
        "--json",
        json,
      ],
      {
        stdout: stream,
        stderr: stream,
        env: {
          PARTNER_API_KEY: options.credentials.apiKey,
          PARTNER_SIGNING_SECRET: options.credentials.signingSecret,
          PARTNER_OTHER_ENV_API_KEY: options.credentials.otherEnvApiKey,
          ...(options.credentials.revokedApiKey === undefined
            ? {}
            : { PARTNER_REVOKED_API_KEY: options.credentials.revokedApiKey }),
        },
      },
    );
    const report = JSON.parse(readFileSync(json, "utf8")) as {
      summary: CertifyResult["summary"];
      results: Array<{ id: string; status: string; message?: string; optIn?: boolean }>;
    };
    const notPassed = report.results
      .filter((r) => r.status !== "passed")
      .map((r) => `${r.id} ${r.status}: ${r.message ?? ""}`)
      .join("\n");
    const countedSkips = report.results.filter((r) => r.status === "skipped" && r.optIn !== true).length;
    return { code, output, summary: report.summary, countedSkips, notPassed };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
