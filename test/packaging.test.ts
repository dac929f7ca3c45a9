/**
 * The published packages as a team outside the workspace gets them: packed from a clean copy of the
 * repository (no dist/: `prepack` must build it), installed with npm into an empty project in a
 * temporary directory, imported with types (tsc, strict), the Hono recipe run on the team's own
 * data, the installed `partner-yield` bin stopped with SIGTERM, the harness bin answering --help.
 * Slow by nature (three builds, one npm install): one pack and one install serve every test here.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { ACME, positionAnswers, signedEventIsStoredOnce, yieldCalcAnswers } from "../examples/test/acme.js";
import { exited, pnpmEntry, ROOT, waitForOutput } from "./support/processes.js";

const run = promisify(execFile);
/** What an outsider's shell has: not the workspace's source condition that `pnpm test` sets. */
const OUTSIDE = { ...process.env, NODE_OPTIONS: "" };
/** Every published package: a new one is added here (README, "Packages and publishing"). */
const PACKAGES = [
  { name: "@partner-yield/core", dir: "packages/core" },
  { name: "@partner-yield/source-evm", dir: "packages/source-evm" },
  { name: "@partner-yield/store-postgres", dir: "packages/store-postgres" },
  { name: "@partner-yield/store-redis", dir: "packages/store-redis" },
  { name: "@partner-yield/node-adapter", dir: "packages/node-adapter" },
  { name: "@partner-yield/server", dir: "packages/server" },
  { name: "@partner-yield/harness", dir: "harness" },
];
/** The example files an outsider copies for the Hono recipe, and the data they load. */
const HONO_RECIPE = ["partner-api.ts", "listening.ts", "hono.ts", "start.ts"];

function log(step: string): void {
  process.stderr.write(`# packaging: ${step}\n`);
}

/** The working tree as a fresh clone would have it (tracked and new files, nothing ignored), beside the installed dependencies. */
async function cleanCopy(into: string): Promise<void> {
  const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  for (const file of stdout.split("\0")) {
    if (file === "" || !existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(into, file)), { recursive: true });
    cpSync(join(ROOT, file), join(into, file));
  }
  // Installing is not what is tested: reuse the workspace's dependencies. pnpm's links are relative,
  // so each package's node_modules, copied as links, points into the copy (its workspace siblings)
  // or, through the root link, at the store.
  symlinkSync(join(ROOT, "node_modules"), join(into, "node_modules"));
  for (const { dir } of PACKAGES)
    cpSync(join(ROOT, dir, "node_modules"), join(into, dir, "node_modules"), {
      recursive: true,
      verbatimSymlinks: true,
    });
}

describe("packed packages installed with npm outside the workspace", { timeout: 900_000 }, () => {
  let work: string;
  const tarballs = new Map<string, string>();
  let app: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "partner-yield-packaging-"));
    const repo = join(work, "repo");
    log(`clean copy of the repository in ${repo}`);
    await cleanCopy(repo);
    for (const { dir } of PACKAGES)
      assert.ok(!existsSync(join(repo, dir, "dist")), `${dir}/dist in the copy`);

    log("pnpm pack (prepack builds each package)");
    const packs = join(work, "packs");
    await run(
      process.execPath,
      [
        pnpmEntry(),
        ...PACKAGES.flatMap((p) => ["--filter", p.name]),
        "--workspace-concurrency=1",
        "pack",
        "--pack-destination",
        packs,
      ],
      { cwd: repo, maxBuffer: 64 * 1024 * 1024 },
    );
    for (const file of readdirSync(packs)) {
      const pkg = PACKAGES.find((p) => file === `${p.name.slice(1).replace("/", "-")}-0.1.0.tgz`);
      if (pkg !== undefined) tarballs.set(pkg.name, join(packs, file));
    }
    assert.equal(tarballs.size, PACKAGES.length, `tarballs: ${readdirSync(packs).join(", ")}`);

    app = join(work, "app");
    mkdirSync(join(app, "src"), { recursive: true });
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({ name: "acme-server", private: true, type: "module" }),
    );
    const examples = (await import("../examples/package.json", { with: { type: "json" } })).default as {
      dependencies: Record<string, string>;
    };
    const storePostgres = (
      await import("../packages/store-postgres/package.json", { with: { type: "json" } })
    ).default as { devDependencies: Record<string, string> };
    log("npm install of the tarballs into an empty project");
    await run(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        ...tarballs.values(),
        "@types/node@20",
        // store-postgres's types name pg's (an optional peer of it: a TypeScript project adds it).
        `@types/pg@${storePostgres.devDependencies["@types/pg"]}`,
        `hono@${examples.dependencies["hono"]}`,
        `@hono/node-server@${examples.dependencies["@hono/node-server"]}`,
      ],
      { cwd: app, env: OUTSIDE, maxBuffer: 16 * 1024 * 1024 },
    );
    for (const file of HONO_RECIPE) cpSync(join(ROOT, "examples", file), join(app, "src", file));
    cpSync(join(ROOT, "examples", "data"), join(app, "src", "data"), { recursive: true });
    writeFileSync(join(app, "src", "consumer.ts"), CONSUMER);
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          resolveJsonModule: true,
          skipLibCheck: true,
          types: ["node"],
          rootDir: "src",
          outDir: "out",
        },
        include: ["src"],
      }),
    );
    log("tsc over the consumer and the Hono recipe");
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    await run(process.execPath, [tsc, "-p", "."], { cwd: app, env: OUTSIDE }).catch(
      (error: { stdout?: string }) => {
        throw new Error(`tsc failed in ${app}:\n${error.stdout ?? String(error)}`);
      },
    );
  });

  after(() => {
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  test("each tarball holds its built dist/ with declarations, and no tests or build state", async () => {
    for (const [name, tarball] of tarballs) {
      const { stdout } = await run("tar", ["tzf", tarball], { maxBuffer: 16 * 1024 * 1024 });
      const files = stdout.split("\n");
      assert.ok(files.includes("package/dist/index.js"), `${name}: dist/index.js`);
      assert.ok(files.includes("package/dist/index.d.ts"), `${name}: dist/index.d.ts`);
      assert.ok(files.includes("package/README.md"), `${name}: README.md`);
      assert.ok(
        !files.some((f) => /\/test\/|tsbuildinfo/.test(f)),
        `${name}: ${files.filter((f) => /test|tsbuild/.test(f))}`,
      );
    }
  });

  test("a consumer imports every package with types (strict tsc passed, and misuse is a type error) and runs", async () => {
    const { stdout } = await run(process.execPath, [join(app, "out", "consumer.js")], {
      cwd: app,
      env: OUTSIDE,
    });
    assert.deepEqual(JSON.parse(stdout), {
      keyLength: 47,
      hashLength: 64,
      status: 200,
      checks: true,
      listener: "function",
      others: ["function", "function", "string"],
    });
  });

  test("the Hono recipe runs on the installed core with the team's own data", async () => {
    const child = spawn(process.execPath, [join(app, "out", "start.js"), "hono"], {
      cwd: app,
      env: { ...OUTSIDE, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = (await waitForOutput(child, "stdout", /hono listening on (http:\/\/\S+)/).matched)[1]!;
      const send = (path: string, init?: RequestInit) => fetch(url + path, init);
      await yieldCalcAnswers(send);
      await positionAnswers(send);
      await signedEventIsStoredOnce(send);
    } finally {
      await stop(child);
    }
  });

  test("the installed partner-yield bin serves the team's data and stops gracefully on SIGTERM to its PID", async () => {
    const bin = join(app, "node_modules", "@partner-yield", "server", "bin", "partner-yield.js");
    const child = spawn(
      process.execPath,
      [
        bin,
        "serve",
        "--port",
        "0",
        "--log",
        "none",
        "--drain-delay",
        "0",
        "--fixtures",
        join(app, "src", "data"),
      ],
      { cwd: app, env: OUTSIDE, stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      const url = (await waitForOutput(child, "stdout", /serving sandbox at (http:\/\/\S+)/).matched)[1]!;
      await yieldCalcAnswers((path, init) => fetch(url + path, init));
      const stderr = waitForOutput(child, "stderr", /"msg":"stopped"/);
      child.kill("SIGTERM");
      assert.deepEqual(await exited(child), { code: 0, signal: null }, stderr.text());
      await stderr.matched;
      // The lifecycle lines are JSON on stderr (server README, Logs).
      assert.match(stderr.text(), /"msg":"shutting_down"[^\n]*"signal":"SIGTERM"/);
    } finally {
      await stop(child);
    }
  });

  test("the installed harness bin answers run --help", async () => {
    const bin = join(app, "node_modules", ".bin", "partner-yield-conformance");
    const { stdout } = await run(process.execPath, [bin, "run", "--help"], {
      cwd: app,
      env: OUTSIDE,
    });
    assert.match(stdout, /--base-url/);
  });
});

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGKILL");
  await exited(child);
}

/** What a team writes first: one import from each package, typed; each misuse below must fail to compile. */
const CONSUMER = `import { createPartnerApi, generateApiKey, hashApiKey, loadFixtures, type PlainResponse } from "@partner-yield/core";
import { parseAmount } from "@partner-yield/core/math";
import { runEventStoreSuite } from "@partner-yield/core/testing";
import { CHECKS } from "@partner-yield/harness";
import { createListener } from "@partner-yield/node-adapter";
import { apiKeyRow } from "@partner-yield/server";
import { EvmPositionSource } from "@partner-yield/source-evm";
import { createPool } from "@partner-yield/store-postgres";
import { RATE_LIMIT_MANY_SCRIPT } from "@partner-yield/store-redis";
import partners from "./data/partners.json" with { type: "json" };
import prices from "./data/prices.json" with { type: "json" };
import products from "./data/products.json" with { type: "json" };
import vaults from "./data/vaults.json" with { type: "json" };

const key: string = generateApiKey("sandbox");
/** Never called: each misuse must fail to compile, which proves the imports are typed, not any. */
export function misuses(): void {
  // @ts-expect-error the environment is "sandbox" | "production"
  generateApiKey("staging");
  // @ts-expect-error a decimal count is a number
  parseAmount("1", "6");
  // @ts-expect-error handle() takes a PlainRequest
  createPartnerApi({ environment: "sandbox", ...loadFixtures({ "partners.json": partners, "products.json": products, "vaults.json": vaults, "prices.json": prices }) }).handle({ url: "/" });
  // @ts-expect-error the pool is pg's Pool, typed: it has no such method
  createPool({ connectionString: "postgres://" }).noSuchMethod();
}

const data = loadFixtures({ "partners.json": partners, "products.json": products, "vaults.json": vaults, "prices.json": prices });
const api = createPartnerApi({ environment: "sandbox", ...data });
const res: PlainResponse = await api.handle({
  method: "GET",
  path: "/api/partner/products",
  headers: { "x-api-key": "${ACME.sandboxApiKey}" },
});
const status: number = res.status;
console.log(JSON.stringify({
  keyLength: key.length,
  hashLength: apiKeyRow(key).key_hash.length === hashApiKey(key).length ? hashApiKey(key).length : -1,
  status,
  checks: CHECKS.length > 0,
  listener: typeof createListener(api),
  others: [typeof runEventStoreSuite, typeof EvmPositionSource, typeof RATE_LIMIT_MANY_SCRIPT],
}));
`;
