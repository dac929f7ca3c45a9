/**
 * Every mounting recipe of examples/ on the team's own data (examples/data, built as docs/data.md
 * shows): a yield-calc, a position, a signed event (stored once, replayed as a duplicate, refused
 * when tampered with) and the failed-authentication limit per client address.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Listening, ListenOptions } from "../listening.js";
import { createAcmeApi } from "../partner-api.js";
import {
  ACME,
  failedAuthIsLimitedPerAddress,
  positionAnswers,
  type Send,
  signedEventIsStoredOnce,
  yieldCalcAnswers,
} from "./acme.js";

const EXAMPLES = fileURLToPath(new URL("../", import.meta.url));
const FAILED_AUTH_LIMIT = 3;

function suite(
  name: string,
  connect: () => Promise<{ send: Send; close: () => Promise<void> }>,
  limit: number,
) {
  describe(name, { timeout: 30_000 }, () => {
    let send: Send;
    let close: () => Promise<void>;
    before(async () => {
      ({ send, close } = await connect());
    });
    after(() => close());
    test("yield-calc answers the product's figures", () => yieldCalcAnswers(send));
    test("position answers the holder's shares, assets and USD value", () => positionAnswers(send));
    test("a signed event is stored once; a tampered body is refused", () => signedEventIsStoredOnce(send));
    test("failed authentications are limited per client address", () =>
      failedAuthIsLimitedPerAddress(send, limit));
  });
}

type Start = (api: ReturnType<typeof createAcmeApi>, options: ListenOptions) => Promise<Listening>;

for (const framework of ["hono", "express", "fastify"] as const) {
  for (const basePath of [undefined, "/yield/v1"]) {
    suite(
      `${framework} (Node)${basePath === undefined ? "" : `, mounted at ${basePath}`}`,
      async () => {
        const { start } = (await import(`../${framework}.js`)) as { start: Start };
        const api = createAcmeApi({ failedAuthPerMinute: FAILED_AUTH_LIMIT, ...(basePath && { basePath }) });
        const server = await start(api, { port: 0, ...(basePath && { basePath }) });
        // The scenarios speak of /api/partner; under another base path the same requests go there.
        const send: Send = (path, init) =>
          fetch(
            server.url + (basePath === undefined ? path : path.replace(/^\/api\/partner/, basePath)),
            init,
          );
        if (basePath !== undefined) {
          const old = await fetch(`${server.url}/api/partner/products`, {
            headers: { "x-api-key": ACME.sandboxApiKey },
          });
          assert.equal(old.status, 404, "nothing answers at the default path any more");
        }
        return { send, close: () => server.close() };
      },
      FAILED_AUTH_LIMIT,
    );
  }
}

suite("fetch runtime (the Workers-style default export, called as the runtime would)", async () => {
  const worker = (await import("../fetch-runtime.js")).default;
  const send: Send = (path, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("cf-connecting-ip", "203.0.113.9");
    return worker.fetch(new Request(`https://partner.example${path}`, { ...init, headers }));
  };
  return { send, close: async () => undefined };
}, 30); // the core's default: this example builds its API at import

test("fetch runtime: the address comes from CF-Connecting-IP, so another client is not blocked", async () => {
  const worker = (await import("../fetch-runtime.js")).default;
  const res = await worker.fetch(
    new Request("https://partner.example/api/partner/products", {
      headers: { "x-api-key": "ypk_test_guess", "cf-connecting-ip": "203.0.113.10" },
    }),
  );
  assert.equal(res.status, 401);
});

/**
 * The `bun` package's binary (installed with the examples' dependencies), if it runs here. The
 * binary itself, not pnpm's `.bin/bun` shell shim: the shim does not exec, so a signal to it would
 * leave Bun running.
 */
async function runnableBun(): Promise<string | undefined> {
  let bin: string;
  try {
    bin = join(dirname(createRequire(import.meta.url).resolve("bun/package.json")), "bin", "bun.exe");
  } catch {
    return undefined;
  }
  if (!existsSync(bin)) return undefined;
  const probe = spawn(bin, ["--version"], { stdio: "ignore" });
  const code = await new Promise<number | null>((resolve) => {
    probe.once("error", () => resolve(null));
    probe.once("exit", resolve);
  });
  return code === 0 ? bin : undefined;
}

const bun = await runnableBun();
if (bun === undefined) {
  const why = "the bun binary (the bun package's bin/bun.exe) is missing or does not run on this machine";
  if (process.env["CI"] === "true") {
    test("bun runs examples/bun.ts", () => assert.fail(why));
  } else {
    console.error(
      `\n*** SKIPPED the Bun example: ${why}. \`npx -y pnpm@10 install\` runs bun's postinstall.\n`,
    );
    test("bun runs examples/bun.ts", { skip: why }, () => undefined);
  }
} else {
  suite("bun (examples/bun.ts in a real Bun process)", async () => {
    const child = spawn(bun, ["--conditions=@partner-yield/source", "bun.ts"], {
      cwd: EXAMPLES,
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match !== null) resolve(match[1]!);
      });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
      });
      child.once("exit", (code) => reject(new Error(`bun exited (${code}) before listening:\n${out}`)));
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    return {
      send: (path, init) => fetch(url + path, init),
      close: async () => {
        child.kill("SIGTERM");
        await exited;
      },
    };
  }, 30); // the core's default: bun.ts builds its API as a team would
}
