/**
 * The commands the CLI prints run as printed: the prefix follows how the CLI was started (a pnpm
 * script in a checkout, an installed package, the built bin, the source).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { invocationOf } from "../src/invocation.js";

const bin = mkdtempSync(join(tmpdir(), "conformance-path-"));
after(() => rmSync(bin, { recursive: true, force: true }));
writeFileSync(join(bin, "pnpm"), "");
writeFileSync(join(bin, "partner-yield-conformance"), "");

const PNPM = {
  npm_lifecycle_event: "conformance",
  npm_config_user_agent: "pnpm/10.34.9 npm/? node/v20.20.2 linux x64",
};

describe("the command prefix the CLI prints", () => {
  test("from a checkout's pnpm script: pnpm when it is on the PATH, npx -y pnpm@10 otherwise", () => {
    assert.deepEqual(invocationOf({ ...PNPM, PATH: bin }, "/repo/harness/src/cli.ts", "/repo"), {
      conformance: "pnpm conformance",
      properties: "pnpm conformance properties",
    });
    assert.deepEqual(invocationOf({ ...PNPM, PATH: "/nowhere" }, "/repo/harness/src/cli.ts", "/repo"), {
      conformance: "npx -y pnpm@10 conformance",
      properties: "npx -y pnpm@10 conformance properties",
    });
    // npx fetched pnpm: its cache and the project's bins are on the script's PATH, not the user's.
    const npxCache = "/root/.npm/_npx/a1a3/node_modules/.bin";
    writeFileSync(join(bin, "pnpm"), "");
    assert.equal(
      invocationOf(
        {
          ...PNPM,
          npm_execpath: "/root/.npm/_npx/a1a3/node_modules/pnpm/bin/pnpm.cjs",
          PATH: `${bin}:${npxCache}`,
        },
        "/repo/harness/src/cli.ts",
        "/repo",
      ).conformance,
      "npx -y pnpm@10 conformance",
    );
    const viaProperties = invocationOf(
      { ...PNPM, npm_lifecycle_event: "properties", PATH: bin },
      "/repo/harness/src/cli.ts",
      "/repo",
    );
    assert.equal(viaProperties.properties, "pnpm properties");
  });

  test("from an installed package: npx in its project, the bare name when it is on the PATH", () => {
    assert.equal(
      invocationOf({ PATH: "/nowhere" }, "/app/node_modules/.bin/partner-yield-conformance", "/app")
        .conformance,
      "npx partner-yield-conformance",
    );
    assert.equal(
      invocationOf(
        { PATH: "/nowhere" },
        "/app/node_modules/.pnpm/@partner-yield+harness@0.1.0/node_modules/@partner-yield/harness/bin/partner-yield-conformance.js",
        "/app",
      ).conformance,
      "npx partner-yield-conformance",
    );
    assert.equal(
      invocationOf({ PATH: bin }, join(bin, "partner-yield-conformance"), "/").conformance,
      "partner-yield-conformance",
    );
  });

  test("from the built bin or the source in a checkout: the path as run", () => {
    assert.equal(
      invocationOf({ PATH: "/nowhere" }, "/repo/harness/bin/partner-yield-conformance.js", "/repo")
        .properties,
      "node harness/bin/partner-yield-conformance.js properties",
    );
    assert.equal(
      invocationOf({ PATH: "/nowhere" }, "/repo/harness/src/cli.ts", "/repo").conformance,
      "NODE_OPTIONS=--conditions=@partner-yield/source npx tsx harness/src/cli.ts",
    );
  });
});
