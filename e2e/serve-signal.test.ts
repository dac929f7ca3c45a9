/**
 * `pnpm serve` under a supervisor: the supervisor holds the PID it spawned, and its SIGTERM must
 * reach the server, which then shuts down gracefully (README of the node adapter, "Containers and
 * supervisors").
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { exited, pnpmEntry, ROOT, waitForOutput } from "./support/processes.js";

test("SIGTERM to the PID running `pnpm serve` reaches the server: graceful shutdown, exit 0, port closed", {
  timeout: 60_000,
}, async () => {
  // Its own process group, so that cleanup reaches a server orphaned by a regression.
  // No drain delay: nothing balances this server (the drain is drain.test.ts's).
  const child = spawn(
    process.execPath,
    [pnpmEntry(), "serve", "--port", "0", "--log", "none", "--drain-delay", "0"],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  try {
    const banner = waitForOutput(child, "stdout", /serving sandbox at (http:\/\/127\.0\.0\.1:[0-9]+)/);
    const stderr = waitForOutput(child, "stderr", /"msg":"stopped"/);
    const url = (await banner.matched)[1]!;
    assert.equal((await fetch(`${url}/readyz`)).status, 200);

    assert.ok(child.kill("SIGTERM"));
    const { code, signal } = await exited(child);
    await stderr.matched.catch(() => undefined);
    // The lifecycle lines on stderr are JSON (server README, "Logs").
    const lines = stderr
      .text()
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { msg: string; signal?: string });
    assert.ok(
      lines.some((line) => line.msg === "shutting_down" && line.signal === "SIGTERM"),
      stderr.text(),
    );
    assert.ok(
      lines.some((line) => line.msg === "stopped"),
      stderr.text(),
    );
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, stderr.text());
    // The server itself is gone, not orphaned under a dead parent.
    await assert.rejects(fetch(`${url}/healthz`), /fetch failed/);
  } finally {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // the group is gone: nothing was left behind
    }
  }
});
