/**
 * The published packages as a team outside the workspace gets them: packed from a clean copy of the
 * repository (no dist/: `prepack` must build it), installed with npm into empty directories in a
 * temporary directory, as each kind of user installs them:
 * - everything in one project: imported with types (tsc, strict), the testing entries included,
 *   the Hono recipe run on the team's own data;
 * - the core and the node adapter alone (a team serving the API from Node): none of the stores'
 *   or the chain source's libraries comes with them, `startServer` answers a GET, and the API suite
 *   of the node adapter's testing entry passes on the fixtures the package carries;
 * - the server, `npm i -g` with the workspace packages it depends on: `partner-yield serve`
 *   answers, stops on SIGTERM, and `db migrate` migrates a fresh database (PostgreSQL);
 * - the harness with the core (QA): neither the server nor a store comes with it, and it certifies
 *   a server started from the workspace.
 * - the Fastify plugin and the Express middleware, from their tarballs in that first project,
 *   certified by the installed harness at both levels under /yield/v1.
 * Slow by nature (every package built, four npm installs): one pack and one install of each kind
 * serve every test here.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { ACME, positionAnswers, signedEventIsStoredOnce, yieldCalcAnswers } from "../examples/test/acme.js";
import { DEMO_CREDENTIALS as DEMO } from "../packages/core/src/demo/index.js";
import { type RunningServer, startServer } from "../packages/node-adapter/src/index.js";
import { gate } from "../packages/node-adapter/src/testing/index.js";
import { postgresReachable, testDatabase } from "../packages/store-postgres/src/testing/index.js";
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
  { name: "@partner-yield/fastify", dir: "packages/fastify" },
  { name: "@partner-yield/express", dir: "packages/express" },
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

/** The libraries of the stores and the chain source: none may come with the core and the node adapter. */
const BACKEND_LIBRARIES = ["viem", "ox", "pg", "ioredis", "prom-client", "@opentelemetry/api"];

const services = gate({ PostgreSQL: await postgresReachable() });
const database = services.available ? await testDatabase("packaging", { migrated: false }) : undefined;

/** `npm install` of `specs` in `cwd`, as an outsider runs it (`args` first: `-g --prefix DIR`). */
async function npmInstall(
  cwd: string,
  specs: readonly string[],
  args: readonly string[] = [],
): Promise<void> {
  mkdirSync(cwd, { recursive: true });
  if (args.length === 0 && !existsSync(join(cwd, "package.json")))
    writeFileSync(
      join(cwd, "package.json"),
      JSON.stringify({ name: "outsider", private: true, type: "module" }),
    );
  await run("npm", ["install", ...args, "--no-audit", "--no-fund", "--prefer-offline", ...specs], {
    cwd,
    env: OUTSIDE,
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** The name of every package npm installed in `dir`'s node_modules (nested ones too). */
function installedPackages(dir: string): Set<string> {
  const lock = JSON.parse(readFileSync(join(dir, "node_modules", ".package-lock.json"), "utf8")) as {
    packages: Record<string, unknown>;
  };
  return new Set(
    Object.keys(lock.packages).map((path) => path.slice(path.lastIndexOf("node_modules/") + 13)),
  );
}

/** The package.json a tarball ships. */
async function manifestOf(tarball: string): Promise<Record<string, Record<string, unknown> | undefined>> {
  const { stdout } = await run("tar", ["xzf", tarball, "-O", "package/package.json"]);
  return JSON.parse(stdout) as Record<string, Record<string, unknown> | undefined>;
}

describe("packed packages installed with npm outside the workspace", { timeout: 900_000 }, () => {
  let work: string;
  const tarballs = new Map<string, string>();
  let app: string;
  /** The core and the node adapter alone. */
  let light: string;
  /** `npm i -g --prefix global` of the server and the workspace packages it depends on. */
  let global: string;
  /** The core and the harness alone. */
  let qa: string;
  const tarball = (name: string) => tarballs.get(name)!;

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
      devDependencies: Record<string, string>;
    };
    const storePostgres = (
      await import("../packages/store-postgres/package.json", { with: { type: "json" } })
    ).default as { devDependencies: Record<string, string> };
    light = join(work, "light");
    global = join(work, "global");
    qa = join(work, "qa");
    log("npm install into empty directories: everything; core + node-adapter; -g server; core + harness");
    await Promise.all([
      npmInstall(app, [
        ...tarballs.values(),
        "@types/node@20",
        // store-postgres's types name pg's (an optional peer of it: a TypeScript project adds it).
        `@types/pg@${storePostgres.devDependencies["@types/pg"]}`,
        `hono@${examples.dependencies["hono"]}`,
        `@hono/node-server@${examples.dependencies["@hono/node-server"]}`,
        `fastify@${examples.dependencies["fastify"]}`,
        `express@${examples.dependencies["express"]}`,
        `@types/express@${examples.devDependencies["@types/express"]}`,
      ]),
      npmInstall(light, [tarball("@partner-yield/core"), tarball("@partner-yield/node-adapter")]),
      npmInstall(
        global,
        [
          "@partner-yield/server",
          "@partner-yield/node-adapter",
          "@partner-yield/core",
          "@partner-yield/store-postgres",
          "@partner-yield/store-redis",
          "@partner-yield/source-evm",
        ].map(tarball),
        ["-g", "--prefix", global],
      ),
      npmInstall(qa, [tarball("@partner-yield/core"), tarball("@partner-yield/harness")]),
    ]);
    for (const file of HONO_RECIPE) cpSync(join(ROOT, "examples", file), join(app, "src", file));
    cpSync(join(ROOT, "examples", "data"), join(app, "src", "data"), { recursive: true });
    writeFileSync(join(app, "src", "consumer.ts"), CONSUMER);
    writeFileSync(join(app, "src", "mounts.ts"), MOUNTS);
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
    // The node adapter carries the sandbox fixtures its DEFAULT_FIXTURES_DIR reads.
    const { stdout } = await run("tar", ["tzf", tarball("@partner-yield/node-adapter")]);
    for (const file of ["partners.json", "products.json", "vaults.json", "prices.json"])
      assert.ok(stdout.split("\n").includes(`package/fixtures/${file}`), `node-adapter: fixtures/${file}`);
  });

  test("each manifest depends on what its code runs: the node adapter on the core, the harness on neither server nor store", async () => {
    const adapter = await manifestOf(tarball("@partner-yield/node-adapter"));
    assert.deepEqual(adapter["dependencies"], { "@partner-yield/core": "0.1.0" });
    const harness = await manifestOf(tarball("@partner-yield/harness"));
    assert.deepEqual(
      Object.keys(harness["dependencies"] ?? {}).filter((name) => name.startsWith("@partner-yield/")),
      ["@partner-yield/core"],
    );
    assert.deepEqual(harness["peerDependencies"], { "@partner-yield/node-adapter": "0.1.0" });
    assert.deepEqual(harness["peerDependenciesMeta"], { "@partner-yield/node-adapter": { optional: true } });
    const storePostgres = await manifestOf(tarball("@partner-yield/store-postgres"));
    assert.ok(!("@types/pg" in (storePostgres["dependencies"] ?? {})), "@types/pg is no runtime dependency");
    assert.deepEqual(storePostgres["peerDependenciesMeta"], { "@types/pg": { optional: true } });
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
      testing: {
        demo: "northwind",
        vectors: 6,
        sandbox: true,
        entries: ["function", "function", "function"],
      },
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

  test("the core and the node adapter install alone (no store, chain or metrics library) and startServer answers a GET", async () => {
    const installed = installedPackages(light);
    assert.ok(installed.has("@partner-yield/node-adapter") && installed.has("@partner-yield/core"));
    for (const name of BACKEND_LIBRARIES)
      assert.ok(!installed.has(name), `${name} installed with the node adapter`);
    assert.ok(![...installed].some((name) => /^@partner-yield\/(server|store-|source-)/.test(name)));
    writeFileSync(join(light, "serve.js"), LIGHT_SCRIPT);
    const { stdout } = await run(process.execPath, ["serve.js"], { cwd: light, env: OUTSIDE });
    const answer = JSON.parse(stdout) as { status: number; slugs: string[] };
    assert.equal(answer.status, 200);
    // The sandbox fixtures the package carries (README: the demo product of the curl examples).
    assert.ok(answer.slugs.includes("usdc-base-prime"), stdout);
  });

  test("the node adapter's testing entry runs with the core alone: the API suite passes on the fixtures it carries", async () => {
    writeFileSync(join(light, "api-suite.test.js"), LIGHT_API_SUITE);
    // A test runner of its own: without NODE_TEST_CONTEXT (an undefined variable is not passed),
    // which tells a child of this runner to report to it.
    const env = { ...OUTSIDE, NODE_TEST_CONTEXT: undefined };
    const { stdout } = await run(process.execPath, ["--test", "--test-reporter=tap", "api-suite.test.js"], {
      cwd: light,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    assert.match(stdout, /^# fail 0$/m);
    assert.ok(Number(/^# pass (\d+)$/m.exec(stdout)?.[1]) > 50, stdout.slice(-500));
  });

  test("npm i -g of the server: partner-yield serve answers /healthz on the sandbox fixtures it carries", async () => {
    const child = spawn(
      join(global, "bin", "partner-yield"),
      ["serve", "--port", "0", "--drain-delay", "0"],
      {
        cwd: work,
        env: OUTSIDE,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    try {
      const url = (await waitForOutput(child, "stdout", /serving sandbox at (http:\/\/\S+)/).matched)[1]!;
      const health = await fetch(`${url}/healthz`);
      assert.equal(health.status, 200);
      await health.arrayBuffer();
      const products = await fetch(`${url}/api/partner/products`, {
        headers: { "x-api-key": DEMO.sandboxApiKey },
      });
      assert.equal(products.status, 200);
      await products.arrayBuffer();
    } finally {
      await stop(child);
    }
  });

  test("npm i -g of the server: partner-yield serve serves the team's data and stops gracefully on SIGTERM to its PID", async () => {
    const child = spawn(
      join(global, "bin", "partner-yield"),
      ["serve", "--port", "0", "--log", "none", "--drain-delay", "0", "--fixtures", join(app, "src", "data")],
      { cwd: work, env: OUTSIDE, stdio: ["ignore", "pipe", "pipe"] },
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

  for (const framework of ["fastify", "express"] as const) {
    test(`@partner-yield/${framework} from its tarball passes the installed harness at both levels under /yield/v1, beside the app's routes; close() returns after an oversized chunked event`, async (t) => {
      const harness = join(app, "node_modules", ".bin", "partner-yield-conformance");
      for (const level of ["spec", "reference"] as const) {
        // A fresh app for each level, as a fresh server for each run: the failed-authentication
        // limit counts per address and minute.
        const child = spawn(
          process.execPath,
          [join(app, "out", "mounts.js"), framework, join(ROOT, "fixtures")],
          {
            cwd: app,
            env: OUTSIDE,
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        try {
          const line = (await waitForOutput(child, "stdout", /^(\{.*\})$/m).matched)[1]!;
          const { url, demo, foreignSlug } = JSON.parse(line) as MountedApp;
          await ownRoutesWork(url);
          const certify = await run(
            process.execPath,
            [
              harness,
              "run",
              "--base-url",
              `${url}/yield/v1`,
              "--level",
              level,
              "--wallet",
              demo.walletWithPositions,
              "--fixtures",
              join(ROOT, "fixtures"),
              "--foreign-slug",
              foreignSlug,
              "--fail-on-skip",
              "--rpm",
              "3000",
            ],
            {
              cwd: app,
              env: {
                ...OUTSIDE,
                PARTNER_API_KEY: demo.sandboxApiKey,
                PARTNER_SIGNING_SECRET: demo.signingSecret,
                PARTNER_OTHER_ENV_API_KEY: demo.productionApiKey,
                PARTNER_REVOKED_API_KEY: demo.revokedSandboxApiKey,
              },
              maxBuffer: 16 * 1024 * 1024,
            },
          ).catch((error: { stdout?: string; stderr?: string }) => {
            throw new Error(
              `${framework}, level ${level}:\n${error.stdout ?? ""}${error.stderr ?? String(error)}`,
            );
          });
          const summary = /[0-9]+ passed, [0-9]+ failed, [0-9]+ warnings, [0-9]+ skipped/.exec(
            certify.stdout,
          )?.[0];
          t.diagnostic(`${framework}, level ${level}: ${summary}`);
          assert.match(summary ?? "", /^[1-9][0-9]* passed, 0 failed, 0 warnings/, certify.stdout);
          await ownRoutesWork(url);
          if (level === "reference") {
            await oversizedChunkedEvent(new URL(url), demo.sandboxApiKey);
            child.kill("SIGTERM");
            const done = await Promise.race([
              exited(child),
              new Promise((r) => setTimeout(() => r("late"), 10_000)),
            ]);
            assert.deepEqual(
              done,
              { code: 0, signal: null },
              "close() returned and the process ended within 10 s",
            );
          }
        } finally {
          await stop(child);
        }
      }
    });
  }

  services.test(
    "npm i -g of the server: partner-yield db migrate migrates a fresh database, db status says it is current",
    async () => {
      const bin = join(global, "bin", "partner-yield");
      const env = { ...OUTSIDE, DATABASE_URL: database!.url };
      const migrated = await run(bin, ["db", "migrate"], { cwd: work, env });
      assert.match(migrated.stdout, /schema version 0; applying \d+ migration\(s\)\n {2}applied 0001_/);
      const status = await run(bin, ["db", "status"], { cwd: work, env });
      assert.match(status.stdout, /schema version\s+\d+ \(current\)/);
    },
  );

  describe("the harness with the core alone", () => {
    let server: RunningServer;
    before(async () => {
      // A server started from the workspace, as QA finds a deployment.
      server = await startServer({ port: 0, log: "none", rateLimitQuota: 1000 });
    });
    after(() => server?.close());

    test("neither the server, the node adapter nor a store comes with it", () => {
      const installed = installedPackages(qa);
      assert.ok(installed.has("@partner-yield/harness"));
      for (const name of ["@partner-yield/server", "@partner-yield/node-adapter", ...BACKEND_LIBRARIES])
        assert.ok(!installed.has(name), `${name} installed with the harness`);
      assert.ok(![...installed].some((name) => /^@partner-yield\/(store-|source-)/.test(name)));
    });

    test("partner-yield-conformance run --base-url certifies a server from the workspace, every input given", async () => {
      const { stdout } = await run(
        join(qa, "node_modules", ".bin", "partner-yield-conformance"),
        [
          "run",
          "--base-url",
          server.url,
          "--wallet",
          DEMO.walletWithPositions,
          "--fixtures",
          join(ROOT, "fixtures"),
          "--foreign-slug",
          "usdc-ethereum-contoso",
          "--rpm",
          "6000",
          "--fail-on-skip",
        ],
        {
          cwd: qa,
          env: {
            ...OUTSIDE,
            PARTNER_API_KEY: DEMO.sandboxApiKey,
            PARTNER_SIGNING_SECRET: DEMO.signingSecret,
            PARTNER_OTHER_ENV_API_KEY: DEMO.productionApiKey,
            PARTNER_REVOKED_API_KEY: DEMO.revokedSandboxApiKey,
          },
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      const summary = /(\d+) passed, 0 failed,/.exec(stdout);
      assert.ok(summary !== null, stdout);
      assert.ok(Number(summary[1]) >= 50, `${summary[1]} checks passed`);
    });

    test("its embedded run names the optional peer to install (exit 2)", async () => {
      const bin = join(qa, "node_modules", ".bin", "partner-yield-conformance");
      const failed = await run(bin, ["run"], { cwd: qa, env: OUTSIDE }).then(
        () => assert.fail("the embedded run started without the node adapter"),
        (error: { code?: number; stderr?: string }) => error,
      );
      assert.equal(failed.code, 2, failed.stderr);
      assert.match(failed.stderr ?? "", /needs @partner-yield\/node-adapter, an optional peer dependency/);
      assert.match(failed.stderr ?? "", /npm install @partner-yield\/node-adapter/);
    });
  });
});

/** What the outside app prints once listening: its URL, and the demo inputs of the fixtures it serves. */
interface MountedApp {
  readonly url: string;
  readonly demo: {
    readonly sandboxApiKey: string;
    readonly signingSecret: string;
    readonly productionApiKey: string;
    readonly revokedSandboxApiKey: string;
    readonly walletWithPositions: string;
  };
  readonly foreignSlug: string;
}

/** The outside app's own routes: a GET, and a POST whose JSON body the app's own parser reads. */
async function ownRoutesWork(url: string): Promise<void> {
  assert.deepEqual(await (await fetch(`${url}/status`)).json(), { ok: true });
  const echo = await fetch(`${url}/internal/echo`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ hello: "team" }),
  });
  assert.deepEqual(await echo.json(), { received: { hello: "team" } });
}

/** Twice the 64 KiB limit as a chunked event, then the client ends its side: 413, the socket closed. */
async function oversizedChunkedEvent(url: URL, apiKey: string): Promise<void> {
  const socket = connect(Number(url.port), url.hostname);
  socket.on("error", () => undefined);
  let received = "";
  socket.setEncoding("latin1").on("data", (chunk: string) => {
    received += chunk;
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.write(
    "POST /yield/v1/webhooks/inbound HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
      `X-Api-Key: ${apiKey}\r\nX-Partner-Event: partner.user.created\r\n` +
      `X-Partner-Signature: ${"0".repeat(64)}\r\nIdempotency-Key: oversized\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  const chunk = "x".repeat(16_384);
  for (let i = 0; i < 8; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
  for (let i = 0; i < 250 && !received.includes("\r\n\r\n"); i++) await new Promise((r) => setTimeout(r, 20));
  socket.end();
  await closed;
  assert.match(received, /^HTTP\/1\.1 413 [\s\S]*\r\nconnection: close\r\n/i);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGKILL");
  await exited(child);
}

/** A team serving the API from Node with the node adapter alone: one GET through startServer, on the sandbox. */
const LIGHT_SCRIPT = `import { createNodePartnerApi, DEMO_CREDENTIALS, startServer } from "@partner-yield/node-adapter";
const api = createNodePartnerApi({ environment: "sandbox" });
const server = await startServer({ api, port: 0, log: "none" });
const res = await fetch(\`\${server.url}/api/partner/products\`, { headers: { "x-api-key": DEMO_CREDENTIALS.sandboxApiKey } });
const body = await res.json();
await server.close();
console.log(JSON.stringify({ status: res.status, slugs: body.data.map((p) => p.slug) }));
`;

/** A team's own test with the node adapter's testing entry: the API suite on handle(), in process. */
const LIGHT_API_SUITE = `import { inProcess, runApiSuite } from "@partner-yield/node-adapter/testing";
runApiSuite("installed", inProcess);
`;

/** What a team writes first: one import from each package, typed; each misuse below must fail to compile. */
const CONSUMER = `import { createPartnerApi, generateApiKey, hashApiKey, loadFixtures, type PlainResponse } from "@partner-yield/core";
import { DEMO_CREDENTIALS } from "@partner-yield/core/demo";
import { parseAmount } from "@partner-yield/core/math";
import { fcParams, HMAC_VECTORS, runEventStoreSuite } from "@partner-yield/core/testing";
import { CHECKS } from "@partner-yield/harness";
import { createListener } from "@partner-yield/node-adapter";
import { loadSandbox, runApiSuite } from "@partner-yield/node-adapter/testing";
import { apiKeyRow } from "@partner-yield/server";
import { EvmPositionSource } from "@partner-yield/source-evm";
import { createPool } from "@partner-yield/store-postgres";
import { testDatabase } from "@partner-yield/store-postgres/testing";
import { RATE_LIMIT_MANY_SCRIPT } from "@partner-yield/store-redis";
import { testRedis } from "@partner-yield/store-redis/testing";
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
  // @ts-expect-error a test database is named by a tag
  testDatabase(1);
  // @ts-expect-error fcParams takes the environment
  fcParams();
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
  testing: {
    demo: DEMO_CREDENTIALS.partnerId,
    vectors: HMAC_VECTORS.rfc4231.length,
    sandbox: loadSandbox().productRecords.length > 0,
    entries: [typeof runApiSuite, typeof testDatabase, typeof testRedis],
  },
}));
`;

/**
 * The outside app for the framework packages: `node out/mounts.js fastify|express FIXTURES_DIR`
 * mounts the API at /yield/v1 beside a GET and a POST /internal/echo of its own, prints its URL
 * and the harness's inputs as one JSON line, and closes on SIGTERM (exit 0 once close() returned).
 */
const MOUNTS = `import type { Server } from "node:http";
import { createPartnerApi } from "@partner-yield/core";
import { partnerYield as middleware } from "@partner-yield/express";
import { partnerYield as plugin, partnerYieldFrameworkErrors } from "@partner-yield/fastify";
import { DEMO_CREDENTIALS, loadFixtureDir } from "@partner-yield/node-adapter";
import express from "express";
import Fastify from "fastify";

const [framework, fixtures] = process.argv.slice(2);
const data = loadFixtureDir(fixtures!);
const api = createPartnerApi({
  environment: "sandbox",
  ...data,
  basePath: "/yield/v1",
  rateLimitOverride: 1000,
});
let close: () => Promise<void>;
let url: string;
if (framework === "fastify") {
  const app = Fastify({ frameworkErrors: partnerYieldFrameworkErrors() });
  app.get("/status", async () => ({ ok: true }));
  app.post("/internal/echo", async (request) => ({ received: request.body }));
  await app.register(plugin, { api, prefix: "/yield/v1" });
  url = await app.listen({ port: 0, host: "127.0.0.1" });
  close = () => app.close();
} else {
  const app = express();
  app.use("/yield/v1", middleware({ api }));
  app.use(express.json());
  app.get("/status", (_req, res) => { res.json({ ok: true }); });
  app.post("/internal/echo", (req, res) => { res.json({ received: req.body }); });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  url = \`http://127.0.0.1:\${(server.address() as { port: number }).port}\`;
  close = () => new Promise((resolve) => server.close(() => resolve()));
}
// The harness's inputs for these fixtures: the demo credentials and another partner's product.
const own = new Set(data.productRecords.filter((p) => p.partnerId === DEMO_CREDENTIALS.partnerId).map((p) => p.slug));
const foreignSlug = data.productRecords.map((p) => p.slug).filter((slug) => !own.has(slug)).sort()[0];
console.log(JSON.stringify({ url, demo: DEMO_CREDENTIALS, foreignSlug }));
process.once("SIGTERM", () => void close().then(() => process.exit(0)));
`;
