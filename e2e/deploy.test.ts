/**
 * The deployment examples in deploy/ (README, "Running it in production"): each is checked by the
 * tool that reads it where that tool is installed — `systemd-analyze verify` for the units,
 * `promtool check config` for Prometheus's configuration, `docker compose config` for compose.yaml,
 * `docker build` for the Dockerfile (only with PARTNER_YIELD_DOCKER_BUILD=1: it pulls images) —
 * and skipped LOUDLY where it is not. Without any tool, every flag and PARTNER_YIELD_* variable
 * the examples pass must be one `partner-yield serve` knows.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { SERVE_FLAGS } from "../packages/server/src/cli-options.js";
import { ROOT } from "./support/processes.js";

const DEPLOY = join(ROOT, "deploy");
const read = (path: string) => readFileSync(join(DEPLOY, path), "utf8");

/** Whether `command args` runs (exit 0); its output otherwise. */
function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) {
  const result = spawnSync(command, args, { encoding: "utf8", timeout: 60_000, ...options });
  return {
    missing: result.error !== undefined,
    code: result.status,
    out: `${result.stdout}${result.stderr}`,
  };
}

function skipLoudly(t: { skip(message: string): void }, why: string): void {
  process.stderr.write(`\n!! SKIPPED (deploy/): ${why}\n`);
  t.skip(`SKIPPED: ${why}`);
}

test("systemd units: systemd-analyze verify", (t) => {
  if (run("systemd-analyze", ["--version"]).missing) return skipLoudly(t, "systemd-analyze is not installed");
  const dir = mkdtempSync(join(tmpdir(), "py-units-"));
  try {
    // A template is verified as one of its instances.
    copyFileSync(join(DEPLOY, "systemd", "partner-yield@.service"), join(dir, "partner-yield@8080.service"));
    copyFileSync(
      join(DEPLOY, "systemd", "partner-yield-migrate.service"),
      join(dir, "partner-yield-migrate.service"),
    );
    const result = run(
      "systemd-analyze",
      ["verify", "./partner-yield@8080.service", "./partner-yield-migrate.service"],
      {
        cwd: dir,
      },
    );
    assert.equal(result.code, 0, result.out);
    // verify reports unknown keys and bad values as warnings with exit 0: none either.
    assert.equal(result.out.trim(), "", result.out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("Prometheus configuration: promtool check config (with the alert rules it loads)", (t) => {
  if (run("promtool", ["--version"]).missing)
    return skipLoudly(t, "promtool is not installed (Debian: prometheus)");
  if (!existsSync(join(DEPLOY, "prometheus", "partner-yield.rules.yml")))
    return skipLoudly(
      t,
      "deploy/prometheus/partner-yield.rules.yml (the rules it loads) is not in this checkout",
    );
  const result = run("promtool", ["check", "config", "prometheus/prometheus.yml"], { cwd: DEPLOY });
  assert.equal(result.code, 0, result.out);
});

test("compose.yaml: docker compose config", (t) => {
  const version = run("docker", ["compose", "version"]);
  if (version.missing || version.code !== 0)
    return skipLoudly(t, "docker compose is not installed (the flag and variable check below still runs)");
  const result = run("docker", ["compose", "-f", "compose.yaml", "config", "--quiet"], {
    cwd: DEPLOY,
    env: { ...process.env, POSTGRES_PASSWORD: "x", PARTNER_YIELD_SECRET_KEYS: "k1:x" },
  });
  assert.equal(result.code, 0, result.out);
});

test("Dockerfile: docker build (PARTNER_YIELD_DOCKER_BUILD=1; it pulls node:20-bookworm-slim and npm packages)", {
  timeout: 900_000,
}, (t) => {
  if (process.env["PARTNER_YIELD_DOCKER_BUILD"] !== "1")
    return skipLoudly(
      t,
      "docker build not run (set PARTNER_YIELD_DOCKER_BUILD=1 where Docker can pull images)",
    );
  const info = run("docker", ["info"]);
  if (info.missing || info.code !== 0)
    return skipLoudly(t, `no Docker daemon: ${info.out.trim().split("\n")[0]}`);
  const result = run("docker", ["build", "-f", "deploy/Dockerfile", "-t", "partner-yield:test", "."], {
    cwd: ROOT,
  });
  assert.equal(result.code, 0, result.out);
});

test("every serve flag and PARTNER_YIELD_* variable in deploy/ is one partner-yield serve knows", () => {
  const flags = new Set(SERVE_FLAGS.map((f) => f.flag));
  const variables = new Set([
    ...SERVE_FLAGS.map((f) => f.env),
    // Read by the stores, not by a serve flag: the signing secrets' encryption keys.
    "PARTNER_YIELD_SECRET_KEYS",
    "PARTNER_YIELD_SECRET_KEY",
  ]);
  const files = {
    Dockerfile: read("Dockerfile"),
    "compose.yaml": read("compose.yaml"),
    "systemd/partner-yield@.service": read("systemd/partner-yield@.service"),
    "systemd/partner-yield.env.example": read("systemd/partner-yield.env.example"),
  };
  for (const [file, text] of Object.entries(files)) {
    for (const [, name] of text.matchAll(/\b(PARTNER_YIELD_[A-Z0-9_]+)/g))
      assert.ok(variables.has(name!), `${file}: ${name} is not a variable partner-yield reads`);
    // The serve command lines: exec-form arrays and ExecStart.
    const serveLines = text
      .split("\n")
      .filter((line) => /"serve"|\bserve --/.test(line) && !line.trimStart().startsWith("#"));
    for (const line of serveLines)
      for (const [, flag] of line.matchAll(/--([a-z][a-z0-9-]*)/g))
        assert.ok(flags.has(flag!), `${file}: --${flag} is not a flag of serve`);
  }
  // The units and compose drain within the stop grace period: drain delay + 2 × shutdown timeout.
  assert.match(files["systemd/partner-yield@.service"], /TimeoutStopSec=30/);
  assert.match(files["compose.yaml"], /stop_grace_period: 30s/);
});
