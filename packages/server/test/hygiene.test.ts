/**
 * No API key, signature or signing secret in any response or log line or CLI output (CONTRACT §6,
 * docs/contract.md "Keys and secrets"). Fresh credentials are issued for the test; every error path
 * of the API we can reach is driven over real sockets (raw bytes, so malformed requests too) with
 * those credentials in headers, path, query and body, and every byte the server answers and every
 * log line it writes is searched for them: raw, percent-encoded, and the secret and signatures also
 * as base64 and hex. Then the CLIs (serve with bad flags, db/partners/keys/secrets with bad input),
 * as child processes and in process, with the same search over stdout and stderr.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  createPartnerApi,
  type KeyStore,
  MemoryEventStore,
  MemoryPartnerAdmin,
  type PartnerApi,
  StoreUnavailableError,
  signBody,
} from "@partner-yield/core";
import { echoInput } from "@partner-yield/core/adapters";
import { main as conformance } from "@partner-yield/harness";
import {
  type LogEntry,
  loadFixtureDir,
  nodeHmacSha256,
  nodeSha256,
  type RunningServer,
  resolveErrorLog,
  startServer,
} from "@partner-yield/node-adapter";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { runAdminCommand } from "../src/admin-cli.js";
import { parseCommandLine, UsageError } from "../src/cli-options.js";
import { runDbCommand } from "../src/db-command.js";
import { cliArgs, cliEnv } from "./cli-command.js";

const encoder = new TextEncoder();
const INBOUND = "/api/partner/webhooks/inbound";

/** Everything that must never be shown, each in every form it could take. */
const secrets = new Map<string, string>(); // form → what it is
function forbid(label: string, value: string, binaryForms = false): void {
  const forms = new Set([value, encodeURIComponent(value), percentAll(value)]);
  if (binaryForms) {
    const bytes = Buffer.from(value, "utf8");
    forms.add(bytes.toString("base64"));
    forms.add(bytes.toString("base64url"));
    forms.add(bytes.toString("hex"));
  }
  if (/^[0-9a-f]{64}$/.test(value)) {
    const raw = Buffer.from(value, "hex");
    forms.add(raw.toString("base64"));
    forms.add(raw.toString("base64url"));
  }
  for (const form of forms)
    secrets.set(form.toLowerCase(), `${label} (${form === value ? "raw" : "encoded"})`);
}
function percentAll(value: string): string {
  return [...Buffer.from(value, "utf8")]
    .map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`)
    .join("");
}
/** Every output collected, with where it came from. */
const outputs: { where: string; text: string }[] = [];
function record(where: string, text: string): void {
  outputs.push({ where, text });
}
function leaks(): string[] {
  const found: string[] = [];
  for (const { where, text } of outputs) {
    const lower = text.toLowerCase();
    for (const [form, label] of secrets)
      if (lower.includes(form)) found.push(`${label} in ${where}: ${text.slice(0, 300)}`);
  }
  return found;
}

const data = loadFixtureDir(fileURLToPath(new URL("../../../fixtures/", import.meta.url)));
const admin = new MemoryPartnerAdmin({
  partners: data.partnerList,
  keys: data.keyRecords,
  sha256: nodeSha256,
});
let key = "";
let revokedKey = "";
let productionKey = "";
let secret = "";
let server: RunningServer;
let limitedServer: RunningServer;
const logLines: string[] = [];
const sink = (entry: LogEntry) => logLines.push(JSON.stringify(entry));

function api(overrides: Partial<Parameters<typeof createPartnerApi>[0]> = {}): PartnerApi {
  return createPartnerApi({
    environment: "sandbox",
    ...data,
    keys: admin.keys,
    partners: admin.partners,
    hmac: nodeHmacSha256,
    sha256: nodeSha256,
    onError: resolveErrorLog(sink),
    ...overrides,
  });
}

before(async () => {
  const issued = await admin.createKey({ partnerId: "northwind", environment: "sandbox" });
  const revoked = await admin.createKey({ partnerId: "northwind", environment: "sandbox" });
  await admin.markPartnerVerified("northwind");
  const production = await admin.createKey({ partnerId: "northwind", environment: "production" });
  const signing = await admin.createSigningSecret("northwind");
  assert.ok(issued.ok && revoked.ok && production.ok && signing.ok);
  key = issued.value.apiKey;
  revokedKey = revoked.value.apiKey;
  productionKey = production.value.apiKey;
  secret = signing.value.signingSecret;
  assert.ok((await admin.revokeKey(revoked.value.summary.id)).ok);
  forbid("the API key", key);
  forbid("a revoked key", revokedKey);
  forbid("a production key", productionKey);
  forbid("the signing secret", secret, true);
  // A key one character off (its checksum fails) is still a guess at the key.
  const typo = `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`;
  forbid("a mistyped key", typo);
  server = await startServer({
    api: api({ events: new MemoryEventStore({ maxEvents: 3 }), rateLimitOverride: 1_000_000 }),
    port: 0,
    log: sink,
    timeouts: { headersTimeoutMs: 400, requestTimeoutMs: 800 },
  });
  limitedServer = await startServer({
    api: api({ rateLimitOverride: 2, failedAuthPerMinute: 2 }),
    port: 0,
    log: sink,
  });
});

after(async () => {
  await server?.close();
  await limitedServer?.close();
});

/** One request as raw bytes on its own connection; the whole answer, as latin1 text. */
function raw(port: number, request: string | Buffer, endAfterWrite = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(Buffer.concat(chunks).toString("latin1"));
    }, 5000);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", (error) => {
      clearTimeout(timer);
      if (chunks.length > 0) resolve(Buffer.concat(chunks).toString("latin1"));
      else reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("latin1"));
    });
    socket.write(request, () => {
      if (endAfterWrite) socket.end();
    });
  });
}

function http(
  method: string,
  target: string,
  headers: Record<string, string>,
  body: string | Buffer = "",
): Buffer {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  const lines = [`${method} ${target} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (bytes.length > 0 || method === "POST") lines.push(`Content-Length: ${bytes.length}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), bytes]);
}

function eventHeaders(body: string | Buffer, overrides: Record<string, string> = {}): Record<string, string> {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  return {
    "X-Api-Key": key,
    "Content-Type": "application/json",
    "X-Partner-Event": "partner.user.created",
    "Idempotency-Key": `k-${crypto.randomUUID()}`,
    "X-Partner-Signature": sign(bytes),
    ...overrides,
  };
}

/** What the conformance CLI (`main()` of the harness) writes, caught instead of printed. */
function captureIo(): {
  readonly out: { stdout: string; stderr: string };
  readonly io: NonNullable<Parameters<typeof conformance>[1]>;
} {
  const out = { stdout: "", stderr: "" };
  const stream = (name: keyof typeof out) => ({
    write(text: string) {
      out[name] += text;
    },
    isTTY: false,
  });
  // Started from a checkout with pnpm, as the harness's own tests pretend.
  const invocation = { conformance: "pnpm conformance", properties: "pnpm properties" };
  return { out, io: { stdout: stream("stdout"), stderr: stream("stderr"), env: {}, invocation } };
}

function sign(bytes: Uint8Array): string {
  const signature = signBody(secret, bytes, nodeHmacSha256);
  forbid("a signature", signature);
  return signature;
}

const event = (data = '{"user_id":"u_1"}', type = "partner.user.created") =>
  `{"event_type":"${type}","occurred_at":"2026-11-20T10:15:00Z","data":${data}}`;

/** Sends, records, and returns the status line's code. */
async function send(
  where: string,
  port: number,
  request: string | Buffer,
  endAfterWrite = false,
): Promise<string> {
  const answer = await raw(port, request, endAfterWrite);
  record(where, answer);
  const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? "none";
  const code = /"code":"([a-z_]+)"/.exec(answer)?.[1] ?? "";
  return `${status} ${code}`.trim();
}

describe("no key, signature or secret in any answer or log line", () => {
  test("every error path of the API, over sockets", async () => {
    const p = server.port;
    const k = { "X-Api-Key": key };
    const seen: string[] = [];
    const go = async (where: string, request: string | Buffer, end = false) => {
      const got = await send(where, p, request, end);
      seen.push(`${where} → ${got}`);
      return got;
    };
    assert.equal(await go("products", http("GET", "/api/partner/products", k)), "200");
    assert.equal(
      await go("404 route", http("GET", `/api/partner/nope/${key}?api_key=${key}&s=${secret}`, k)),
      "404 not_found",
    );
    assert.equal(
      await go(
        "404 encoded",
        http("GET", `/x/${encodeURIComponent(secret)}?k=${percentAll(key)}&s=${percentAll(secret)}`, k),
      ),
      "404 not_found",
    );
    assert.equal(await go("405", http("DELETE", "/api/partner/products", k)), "405 method_not_allowed");
    assert.equal(
      await go("product 404", http("GET", `/api/partner/products/${key}`, k)),
      "404 product_not_found",
    );
    assert.equal(await go("missing key", http("GET", "/api/partner/products", {})), "401 missing_api_key");
    assert.equal(
      await go(
        "yield amount",
        http("GET", `/api/partner/products/usdc-base-prime/yield-calc?amount=${key}`, k),
      ),
      "400 invalid_amount",
    );
    assert.equal(
      await go(
        "position address",
        http("GET", `/api/partner/products/usdc-base-prime/position?address=${secret}`, k),
      ),
      "400 invalid_address",
    );
    assert.equal(
      await go(
        "yield param",
        http(
          "GET",
          `/api/partner/products/usdc-base-prime/yield-calc?amount=1&${key}=${secret}&amount=${key}`,
          k,
        ),
      ),
      "400 invalid_parameter",
    );
    // Events.
    const ok = event();
    assert.equal(
      await go("event 200", http("POST", INBOUND, eventHeaders(ok, { "Idempotency-Key": "fixed-1" }), ok)),
      "200",
    );
    assert.equal(
      await go("event dup", http("POST", INBOUND, eventHeaders(ok, { "Idempotency-Key": "fixed-1" }), ok)),
      "200",
    );
    const other = event('{"user_id":"u_2"}');
    assert.equal(
      await go("reused", http("POST", INBOUND, eventHeaders(other, { "Idempotency-Key": "fixed-1" }), other)),
      "422 idempotency_key_reused",
    );
    const big = event(`{"blob":"${secret.repeat(3000)}"}`);
    assert.equal(await go("413", http("POST", INBOUND, eventHeaders(big), big)), "413 payload_too_large");
    assert.equal(
      await go(
        "415",
        http("POST", INBOUND, eventHeaders(ok, { "Content-Type": `text/plain; ${key}=${secret}` }), ok),
      ),
      "415 unsupported_media_type",
    );
    const wrongSignature = signBody(secret, encoder.encode(`${ok} `), nodeHmacSha256);
    forbid("a signature", wrongSignature);
    assert.equal(
      await go(
        "bad signature",
        http("POST", INBOUND, eventHeaders(ok, { "X-Partner-Signature": wrongSignature }), ok),
      ),
      "401 invalid_signature",
    );
    assert.equal(
      await go(
        "malformed signature",
        http(
          "POST",
          INBOUND,
          eventHeaders(ok, { "X-Partner-Signature": `sha256=${sign(encoder.encode(ok))}${secret}` }),
          ok,
        ),
      ),
      "401 invalid_signature",
    );
    assert.equal(
      await go(
        "signature is the secret",
        http("POST", INBOUND, eventHeaders(ok, { "X-Partner-Signature": secret }), ok),
      ),
      "401 invalid_signature",
    );
    const noKey = eventHeaders(ok);
    delete (noKey as Record<string, string | undefined>)["Idempotency-Key"];
    assert.equal(
      await go("no idempotency key", http("POST", INBOUND, noKey, ok)),
      "400 missing_idempotency_key",
    );
    assert.equal(
      await go(
        "bad idempotency key",
        http("POST", INBOUND, eventHeaders(ok, { "Idempotency-Key": `${key} ${secret}` }), ok),
      ),
      "400 invalid_idempotency_key",
    );
    const truncated = `{"event_type":"${key}","data":{"s":"${secret}"`;
    assert.equal(
      await go("invalid json", http("POST", INBOUND, eventHeaders(truncated), truncated)),
      "400 invalid_json",
    );
    const notUtf8 = Buffer.concat([
      Buffer.from(`{"k":"${key}","x":"`),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    assert.equal(
      await go("invalid utf-8", http("POST", INBOUND, eventHeaders(notUtf8), notUtf8)),
      "400 invalid_json",
    );
    const duplicate = event(`{"${key}":1,"${key}":2,"${secret}":3}`);
    assert.equal(
      await go("duplicate name", http("POST", INBOUND, eventHeaders(duplicate), duplicate)),
      "400 invalid_json",
    );
    const schema = `{"event_type":"${key}","occurred_at":"${secret}","data":{},"${key}":1,"${secret}":2}`;
    assert.equal(
      await go("invalid event", http("POST", INBOUND, eventHeaders(schema), schema)),
      "400 invalid_event",
    );
    const number = event(`{"n":1234567890123456789012,"${key}":"${secret}"}`);
    assert.equal(
      await go("inexact number", http("POST", INBOUND, eventHeaders(number), number)),
      "400 invalid_event",
    );
    assert.equal(
      await go("type mismatch", http("POST", INBOUND, eventHeaders(ok, { "X-Partner-Event": key }), ok)),
      "400 event_type_mismatch",
    );
    for (let i = 0; i < 3; i++) {
      const fill = event(`{"i":${i},"k":"${key}"}`);
      await go("fill", http("POST", INBOUND, eventHeaders(fill), fill));
    }
    const full = event(`{"last":"${secret}"}`);
    assert.equal(
      await go("store full", http("POST", INBOUND, eventHeaders(full), full)),
      "503 event_store_full",
    );
    // What node's parser refuses, with the key on the line.
    assert.equal(
      await go(
        "bad header line",
        `GET /api/partner/products HTTP/1.1\r\nHost: x\r\nX-Api Key: ${key}\r\n\r\n`,
      ),
      "400 invalid_parameter",
    );
    assert.equal(
      await go(
        "bad target",
        Buffer.from(`GET /api/partner/\u00ff${key} HTTP/1.1\r\nX-Api-Key: ${key}\r\n\r\n`, "latin1"),
      ),
      "400 invalid_parameter",
    );
    assert.equal(
      await go(
        "two lengths",
        `POST ${INBOUND} HTTP/1.1\r\nX-Api-Key: ${key}\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}`,
      ),
      "400 invalid_body",
    );
    assert.equal(
      await go("short body", http("POST", INBOUND, eventHeaders(ok), ok).subarray(0, -5), true),
      "400 invalid_body",
    );
    assert.equal(
      await go(
        "huge headers",
        `GET /api/partner/products HTTP/1.1\r\nX-Api-Key: ${key}\r\nX-Pad: ${secret.repeat(700)}\r\n\r\n`,
      ),
      "431 headers_too_large",
    );
    assert.equal(
      await go("slow headers", `GET /api/partner/products HTTP/1.1\r\nX-Api-Key: ${key}\r\n`),
      "408 request_timeout",
    );
    // Failed authentication, then its 429 (keys of every kind).
    const lp = limitedServer.port;
    assert.equal(await send("quota 1", lp, http("GET", "/api/partner/products", k)), "200");
    assert.equal(await send("quota 2", lp, http("GET", "/api/partner/products", k)), "200");
    assert.equal(await send("quota 429", lp, http("GET", "/api/partner/products", k)), "429 rate_limited");
    assert.equal(
      await send("revoked", lp, http("GET", "/api/partner/products", { "X-Api-Key": revokedKey })),
      "401 invalid_api_key",
    );
    assert.equal(
      await send("wrong env", lp, http("GET", "/api/partner/products", { "X-Api-Key": productionKey })),
      "401 wrong_environment",
    );
    const typo = `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`;
    assert.equal(
      await send("auth 429", lp, http("GET", "/api/partner/products", { "X-Api-Key": typo })),
      "429 rate_limited",
    );
    assert.equal(
      await send("secret as key", lp, http("GET", "/api/partner/products", { "X-Api-Key": secret })),
      "429 rate_limited",
    );
    assert.deepEqual(leaks(), [], seen.join("\n"));
  });

  test("500 and 503 answers and their log lines (a store that fails while holding the key's hash)", async () => {
    const failing = (error: Error): KeyStore => ({
      findByHash: () => Promise.reject(error),
      close: () => Promise.resolve(),
    });
    for (const [error, expected] of [
      [new StoreUnavailableError("key store down", 2), 503],
      [new TypeError("boom"), 500],
    ] as const) {
      const broken = api({ keys: failing(error) });
      const res = await broken.handle({
        method: "GET",
        path: "/api/partner/products",
        headers: { "x-api-key": key },
        clientAddress: "127.0.0.1",
      });
      assert.equal(res.status, expected);
      record(`${expected} answer`, JSON.stringify(res));
    }
    assert.ok(logLines.some((line) => line.includes('"status":500')));
    for (const line of logLines) record("log line", line);
    assert.deepEqual(leaks(), []);
  });
});

function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      cliArgs(args),
      { env: cliEnv(env), timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : -1,
          stdout,
          stderr,
        });
      },
    );
  });
}

describe("no key or secret in what the CLIs print", () => {
  test("serve, db, partners, keys and secrets with bad input, as child processes", async () => {
    const unreachable = `postgres://partner:${encodeURIComponent(secret)}@127.0.0.1:1/db`;
    const runs: [string[], Record<string, string>][] = [
      [["serve", "--port", key], {}],
      [["serve", "--env", secret], {}],
      [["serve", key], {}],
      [["serve", `--${key}`], {}],
      [["serve", "--max-events", secret], {}],
      [["serve", "--body-limit", key], {}],
      [["serve", "--rpc-url", `base=${secret}`], {}],
      [["serve", "--redis-url", `redis://:${secret}@127.0.0.1:1`, "--port", "0"], {}],
      [["serve"], { PARTNER_YIELD_RATE_LIMIT_QUOTA: key }],
      [["serve", "--database-url", unreachable, "--port", "0"], {}],
      [["db", "migrate", "--database-url", unreachable], {}],
      [["db", key], {}],
      [["keys", "list", "--partner", "northwind", "--database-url", unreachable], {}],
      [["keys", "revoke", key], {}],
      [["secrets", "revoke", secret, "--partner", "northwind"], {}],
      [["partners", "add", key, "--name", secret], {}],
    ];
    const results = await Promise.all(
      runs.map(async ([args, env]) => ({ args, result: await cli(args, env) })),
    );
    for (const { args, result } of results) {
      assert.notEqual(result.code, 0, `${args.join(" ")} should fail`);
      record(`partner-yield ${args.join(" ")} (stdout)`, result.stdout);
      record(`partner-yield ${args.join(" ")} (stderr)`, result.stderr);
    }
    assert.deepEqual(leaks(), []);
  });

  test("partners, keys and secrets against the in-memory admin, in process", async () => {
    const runs: [string, string[]][] = [
      ["keys", ["revoke", key]],
      ["keys", ["revoke", "999999"]],
      ["keys", ["create", "--partner", key, "--env", "sandbox"]],
      ["keys", ["create", "--partner", "northwind", "--env", secret]],
      ["keys", ["create", "--partner", "northwind", "--label", `${key}\u0000`]],
      ["keys", ["create", "--partner", "northwind", "--env", "sandbox", "--label", `my ${key}`]],
      ["keys", ["list", "--partner", secret]],
      ["keys", ["list", "--partner", "northwind"]],
      ["keys", ["list", "--partner", "northwind", "--json"]],
      ["keys", ["promote", "--partner", key]],
      ["secrets", ["revoke", secret, "--partner", "northwind"]],
      ["secrets", ["revoke", "1", "--partner", key]],
      ["secrets", ["list", "--partner", "northwind"]],
      ["secrets", ["list", "--partner", "northwind", "--json"]],
      ["partners", ["add", key, "--name", secret]],
      ["partners", ["add", "ok-id", "--name", `${secret}\u0007`]],
      ["partners", ["add", "ok-id-2", "--name", secret]],
      ["partners", ["verify", key]],
      ["partners", ["list", "--json"]],
      ["partners", [key]],
    ];
    for (const [group, argv] of runs) {
      let stdout = "";
      let stderr = "";
      await runAdminCommand(group as "keys", argv, {
        env: {},
        admin,
        stdout: (text) => {
          stdout += text;
        },
        stderr: (text) => {
          stderr += text;
        },
      });
      record(`${group} ${argv.join(" ")} (stdout)`, stdout);
      record(`${group} ${argv.join(" ")} (stderr)`, stderr);
    }
    assert.deepEqual(leaks(), []);
  });
});

/** A value that retitles the terminal (OSC 0), then clears the screen (CSI 2J, C1 CSI), then reverses the text (RLO). */
const HOSTILE = "keys\u001b]0;pwn\u0007\u001b[2J\u009b2J\u202egnp.exe";
/** What no terminal echo may hold: a control (but the line break), format, separator or lone surrogate. */
const RAW_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const LONG = "v".repeat(5000);

function assertTerminalSafe(where: string, text: string): void {
  assert.doesNotMatch(
    text,
    RAW_UNSAFE,
    `${where}: a raw control or formatting character in ${JSON.stringify(text)}`,
  );
  assert.ok(!text.includes(LONG.slice(0, 200)), `${where}: a long value echoed whole`);
  for (const line of text.split("\n"))
    assert.ok(line.length <= 400, `${where}: a line of ${line.length} characters`);
}

describe("terminal hygiene: what a CLI echoes is escaped and cut", () => {
  test("echoInput escapes controls, ESC and OSC sequences, bidi and zero-width characters, and cuts", () => {
    assert.equal(echoInput("keys\u001b]0;pwn\u0007"), '"keys\\x1b]0;pwn\\x07"');
    assert.equal(echoInput("a\u202eb\u200bc\u2028d\ufeff"), '"a\\u{202e}b\\u{200b}c\\u{2028}d\\u{feff}"');
    assert.equal(echoInput('q"b\\'), '"q\\"b\\\\"');
    assert.equal(echoInput(LONG), `"${"v".repeat(80)}…"`);
    assert.equal(echoInput("Café 🚀"), '"Café 🚀"');
    for (const credential of ["ypk_test_abc", "YPK_LIVE_abc", "xWhSeC_abc"])
      assert.equal(echoInput(credential), "(a key or secret: not echoed)");
  });

  test("partner-yield, its db command and the harness CLI, as child processes and in process", async () => {
    const runs: string[][] = [
      [HOSTILE],
      ["serve", `--${HOSTILE}`],
      ["serve", "--port", HOSTILE],
      ["serve", "--log", LONG],
      ["serve", "--rpc-url", `${HOSTILE}=http://127.0.0.1:1`],
      ["serve", "extra", HOSTILE],
      ["db", HOSTILE],
      ["db", "status", `--${HOSTILE}`],
      ["db", "status", LONG],
      ["db", "import-fixtures", "fixtures/", "--env", HOSTILE],
      ["keys", HOSTILE],
    ];
    const results = await Promise.all(runs.slice(0, 2).map((args) => cli(args)));
    for (const [i, result] of results.entries()) {
      assert.equal(result.code, 2, runs[i]!.join(" "));
      assert.match(result.stderr, /keys\\x1b\]0;pwn\\x07/, "the value is shown, escaped");
      assertTerminalSafe(`partner-yield ${i} (stderr)`, result.stderr);
      assertTerminalSafe(`partner-yield ${i} (stdout)`, result.stdout);
    }
    for (const args of runs.slice(2)) {
      const where = `partner-yield ${JSON.stringify(args).slice(0, 60)}`;
      if (args[0] === "serve") {
        assert.throws(
          () => parseCommandLine(args, {}),
          (error: Error) => {
            assertTerminalSafe(where, error.message);
            return error instanceof UsageError;
          },
        );
      } else if (args[0] === "db") {
        const errors: string[] = [];
        const write = process.stderr.write;
        process.stderr.write = ((text: string) => errors.push(text) > 0) as typeof process.stderr.write;
        try {
          assert.equal(await runDbCommand(args.slice(1), {}), 2, where);
        } finally {
          process.stderr.write = write;
        }
        assertTerminalSafe(where, errors.join(""));
      } else {
        let out = "";
        const code = await runAdminCommand(args[0] as "keys", args.slice(1), {
          env: {},
          admin,
          stdout: (text) => {
            out += text;
          },
          stderr: (text) => {
            out += text;
          },
        });
        assert.equal(code, 2, where);
        assertTerminalSafe(where, out);
      }
    }
    for (const args of [
      [HOSTILE],
      ["run", `--${HOSTILE}`],
      ["run", "--level", LONG],
      ["list", "--only", HOSTILE],
    ]) {
      const { out, io } = captureIo();
      assert.equal(await conformance(args, io), 2, args.join(" "));
      assertTerminalSafe(`partner-yield-conformance ${args[0]}`, out.stderr + out.stdout);
    }
  });

  test("admin commands: unknown commands, options, extra arguments and values; names and labels refused", async () => {
    const runs: [string, string[]][] = [
      ["keys", [HOSTILE]],
      ["keys", ["list", `--${HOSTILE}`]],
      ["keys", ["list", "--partner", "northwind", HOSTILE]],
      ["keys", ["list", "--partner", "northwind", LONG]],
      ["keys", ["list", "--partner", HOSTILE]],
      ["keys", ["list", "--partner", "northwind", "--env", HOSTILE]],
      ["keys", ["create", "--partner", "northwind", "--env", "sandbox", "--label", HOSTILE]],
      ["keys", ["create", "--partner", "northwind", "--env", "sandbox", "--label", "a\u2066b"]],
      ["keys", ["create", "--partner", "northwind", "--env", "sandbox", "--label", "WHSEC_abc", "--json"]],
      ["partners", ["add", "bidi-co", "--name", "Acme \u202eetaf"]],
      ["partners", ["add", "zw-co", "--name", "Ac\u200bme"]],
      ["partners", ["add", "sep-co", "--name", "Acme\u2028Ltd", "--json"]],
      ["partners", ["add", "key-co", "--name", "Ypk_Test_abcdef"]],
      ["partners", ["add", HOSTILE, "--name", "x"]],
      ["partners", ["list", "--json"]],
      ["partners", ["list"]],
    ];
    for (const [group, argv] of runs) {
      let stdout = "";
      let stderr = "";
      const code = await runAdminCommand(group as "keys", argv, {
        env: {},
        admin,
        stdout: (text) => {
          stdout += text;
        },
        stderr: (text) => {
          stderr += text;
        },
      });
      const where = `${group} ${JSON.stringify(argv).slice(0, 80)}`;
      if (group === "partners" && argv[0] === "list") assert.equal(code, 0, where);
      else assert.notEqual(code, 0, where);
      assertTerminalSafe(`${where} (stdout)`, stdout);
      assertTerminalSafe(`${where} (stderr)`, stderr);
    }
    for (const id of ["bidi-co", "zw-co", "sep-co", "key-co"])
      assert.equal((await admin.getPartner(id)).ok, false, `${id} was not added`);
  });
});

const postgres = gate({ postgres: await postgresReachable() });
const db = postgres.available ? await testDatabase("hygiene", { prefix: "py_hardencore_" }) : undefined;

postgres.describe("no key or secret in what the CLIs print, on PostgreSQL", () => {
  test("partners, keys, secrets and db commands: a created key or secret only on its own command's stdout", async () => {
    const env = { DATABASE_URL: db!.url };
    const run = async (args: string[]) => ({ args, ...(await cli(args, env)) });
    assert.equal((await run(["partners", "add", "hygiene-co", "--name", "Hygiene Co"])).code, 0);
    const createdKey = await run(["keys", "create", "--partner", "hygiene-co", "--env", "sandbox", "--json"]);
    const createdSecret = await run(["secrets", "create", "--partner", "hygiene-co", "--json"]);
    assert.equal(createdKey.code, 0, createdKey.stderr);
    assert.equal(createdSecret.code, 0, createdSecret.stderr);
    const pgKey = /ypk_test_[A-Za-z0-9]+/.exec(createdKey.stdout)?.[0];
    const pgSecret = /whsec_[A-Za-z0-9_-]+/.exec(createdSecret.stdout)?.[0];
    assert.ok(pgKey !== undefined && pgSecret !== undefined, "shown once by the command that creates it");
    assert.ok(!createdKey.stderr.includes(pgKey) && !createdSecret.stderr.includes(pgSecret));
    forbid("a key issued on PostgreSQL", pgKey);
    forbid("a secret issued on PostgreSQL", pgSecret, true);
    // Independent of each other: run at once (each is a process start).
    const runs = await Promise.all([
      run(["keys", "list", "--partner", "hygiene-co"]),
      run(["keys", "list", "--partner", "hygiene-co", "--json"]),
      run(["keys", "revoke", pgKey]),
      run(["keys", "revoke", "999999"]),
      run(["keys", "promote", "--partner", "hygiene-co"]),
      run(["keys", "promote", "--partner", pgKey]),
      run(["keys", "create", "--partner", pgKey, "--env", "sandbox"]),
      run(["keys", "create", "--partner", "hygiene-co", "--env", pgSecret]),
      run(["secrets", "list", "--partner", "hygiene-co", "--json"]),
      run(["secrets", "revoke", pgSecret, "--partner", "hygiene-co"]),
      run(["secrets", "revoke", "1", "--partner", pgKey]),
      run(["secrets", "create", "--partner", pgSecret]),
      run(["partners", "add", pgKey, "--name", pgSecret]),
      run(["partners", "add", "ok-id", "--name", pgSecret]),
      run(["partners", "verify", pgKey]),
      run(["partners", "list", "--json"]),
      run(["db", "status"]),
      run(["db", "import-fixtures", `/nonexistent/${pgKey}`]),
      run(["db", pgSecret]),
    ]);
    for (const r of runs) {
      record(`partner-yield ${r.args.join(" ")} (stdout)`, r.stdout);
      record(`partner-yield ${r.args.join(" ")} (stderr)`, r.stderr);
    }
    assert.deepEqual(leaks(), []);
  });
});
