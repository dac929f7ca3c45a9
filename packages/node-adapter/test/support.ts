/** Test support: a server on 127.0.0.1:0, signed events, and a raw HTTP/1.1 connection. */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiKey, generateSigningSecret, hashApiKey, signBody } from "@partner-yield/core";
import { DEMO_CREDENTIALS } from "@partner-yield/core/demo";
import {
  DEFAULT_FIXTURES_DIR,
  type RunningServer,
  type StartServerOptions,
  startServer,
} from "../src/index.js";

export const DEMO = DEMO_CREDENTIALS;
export const KEY = DEMO.sandboxApiKey;
export const INBOUND = "/api/partner/webhooks/inbound";

/** A server on an ephemeral port, quiet, with a quota high enough for bursts. */
export function startTestServer(options: StartServerOptions = {}): Promise<RunningServer> {
  return startServer({ port: 0, log: "none", rateLimitQuota: 1_000_000, ...options });
}

export function eventBody(userId: string = crypto.randomUUID()): string {
  return JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: userId },
  });
}

/** The five headers of a correctly signed event (CONTRACT §5). */
export function eventHeaders(body: string | Uint8Array, idempotencyKey: string): Record<string, string> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return {
    "content-type": "application/json",
    "x-api-key": KEY,
    "x-partner-event": "partner.user.created",
    "x-partner-signature": signBody(DEMO.signingSecret, bytes),
    "idempotency-key": idempotencyKey,
  };
}

/** The head of a raw HTTP/1.1 request. */
export function requestHead(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

export interface RawResponse {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** One TCP connection speaking HTTP/1.1 by hand: for what a well-behaved client cannot do. */
export class RawConnection {
  readonly socket: Socket;
  #buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  #closed: Promise<void>;
  isClosed = false;
  error: Error | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on("data", (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake();
    });
    socket.on("error", (error) => {
      this.error = error;
    });
    this.#closed = new Promise((resolve) =>
      socket.once("close", () => {
        this.isClosed = true;
        this.#wake();
        resolve();
      }),
    );
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  write(data: string | Buffer): boolean {
    return this.socket.write(data);
  }

  /** Resolves when the server has closed the connection. */
  closed(): Promise<void> {
    return this.#closed;
  }

  /** The next response (a `100 Continue` counts as one), or rejects after `timeoutMs`. */
  async response(timeoutMs = 5_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.#take();
      if (parsed !== undefined) return parsed;
      if (this.isClosed)
        throw new Error(`connection closed; unparsed: ${JSON.stringify(this.#buffer.toString("latin1"))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("no response in time");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  #take(): RawResponse | undefined {
    const end = this.#buffer.indexOf("\r\n\r\n");
    if (end === -1) return undefined;
    const [statusLine, ...lines] = this.#buffer.subarray(0, end).toString("latin1").split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(statusLine!.split(" ")[1]);
    const length = Number(headers["content-length"] ?? "0");
    if (this.#buffer.length < end + 4 + length) return undefined;
    const body = this.#buffer.subarray(end + 4, end + 4 + length).toString("utf8");
    this.#buffer = this.#buffer.subarray(end + 4 + length);
    return { status, headers, body };
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `condition` every 10 ms until it holds, or fails after `timeoutMs`. */
export async function eventually(
  condition: () => boolean,
  timeoutMs = 3_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await sleep(10);
  }
}

const REQUEST_ID = /^req_[0-9a-f]{12}[0-9a-z]{6,}$/;

/** A complete problem answer (CONTRACT §6, §9) with this status and code, closing the connection. */
export function assertProblem(res: RawResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(res.status, status, res.body);
  assert.equal(res.headers["content-type"], "application/problem+json; charset=utf-8");
  assert.equal(res.headers["cache-control"], "no-store");
  assert.equal(res.headers["x-content-type-options"], "nosniff");
  assert.equal(res.headers["connection"], "close");
  assert.match(res.headers["x-request-id"] ?? "", REQUEST_ID);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  assert.deepEqual(
    { ...body, detail: typeof body["detail"] },
    {
      success: false,
      type: `https://partner-yield.dev/errors/${code}`,
      title: body["title"],
      status,
      code,
      detail: "string",
      request_id: res.headers["x-request-id"],
    },
  );
  assert.equal(typeof body["title"], "string");
  return body;
}

/** A copy of the demo fixtures whose keys and secrets are fresh (never published): for production. */
export interface PrivateFixtures {
  readonly dir: string;
  readonly sandboxApiKey: string;
  readonly productionApiKey: string;
  readonly signingSecret: string;
  /** Removes the directory. */
  remove(): void;
}

/**
 * The demo fixtures with every credential replaced by a fresh one, in a temporary directory: a
 * production server refuses the published ones (CONTRACT §4, "Published credentials").
 * @example const fx = privateFixtures(); startCli(["--env", "production", "--fixtures", fx.dir]);
 */
export function privateFixtures(): PrivateFixtures {
  const dir = mkdtempSync(join(tmpdir(), "py-private-fixtures-"));
  cpSync(DEFAULT_FIXTURES_DIR, dir, { recursive: true });
  const sandboxApiKey = generateApiKey("sandbox");
  const productionApiKey = generateApiKey("production");
  const signingSecret = generateSigningSecret();
  const partners = JSON.parse(readFileSync(join(dir, "partners.json"), "utf8")) as {
    id: string;
    signing_secrets: string[];
    api_keys: { key_hash: string; environment: string; status: string; label?: string }[];
  }[];
  for (const partner of partners) {
    const own = partner.id === DEMO.partnerId;
    partner.signing_secrets = own ? [signingSecret] : [generateSigningSecret()];
    partner.api_keys = own
      ? [
          {
            key_hash: hashApiKey(sandboxApiKey),
            environment: "sandbox",
            status: "active",
            label: "private sandbox",
          },
          {
            key_hash: hashApiKey(productionApiKey),
            environment: "production",
            status: "active",
            label: "private production",
          },
        ]
      : [{ key_hash: hashApiKey(generateApiKey("sandbox")), environment: "sandbox", status: "active" }];
  }
  writeFileSync(join(dir, "partners.json"), JSON.stringify(partners, null, 2));
  return {
    dir,
    sandboxApiKey,
    productionApiKey,
    signingSecret,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
