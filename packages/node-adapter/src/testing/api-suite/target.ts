/**
 * What every part of the API suite shares: how the API is mounted (`Mount`), the running target
 * with its request helpers, and the assertions on problems.
 */
import assert from "node:assert/strict";
import {
  createPartnerApi,
  ERRORS,
  type PartnerApi,
  type PartnerApiHandler,
  type PartnerApiOptions,
  Problem,
  type RateLimiter,
  signBody,
} from "@partner-yield/core";
import { DEMO } from "../requests.js";
import { loadSandbox } from "../sandbox.js";

export { DEMO, loadSandbox };

export interface SentRequest {
  readonly method: string;
  /** Path including the query string. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Uint8Array;
}

export interface SentResponse {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Record<string, string>;
  readonly text: string;
}

export interface Mounted {
  send(request: SentRequest): Promise<SentResponse>;
  close(): Promise<void>;
}

export type Mount = (api: PartnerApiHandler) => Promise<Mounted>;

/**
 * Where the API under test keeps its state. Default: the sandbox fixtures in memory. A durable
 * backend (PostgreSQL, Redis) gives fresh stores holding the same fixtures for each API the suite
 * starts, and a limiter two APIs can share; the API closes what it is given.
 */
export interface ApiBackend {
  stores(): Promise<Partial<PartnerApiOptions>>;
  rateLimiter(): Promise<RateLimiter>;
}

/** The API in-process: `handle()` called directly, no socket. */
export const inProcess: Mount = async (api) => ({
  async send(request) {
    const q = request.path.indexOf("?");
    const body = typeof request.body === "string" ? new TextEncoder().encode(request.body) : request.body;
    const res = await api.handle({
      method: request.method,
      path: q === -1 ? request.path : request.path.slice(0, q),
      query: q === -1 ? "" : request.path.slice(q + 1),
      headers: Object.fromEntries(
        Object.entries(request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
      ),
      body,
      clientAddress: "203.0.113.7",
    });
    return { status: res.status, headers: res.headers, text: res.body ?? "" };
  },
  close: () => Promise.resolve(),
});

export const P = "/api/partner";
export const KEY = DEMO.sandboxApiKey;
export const WALLET = DEMO.walletWithPositions;
export const EMPTY_WALLET = "0x000000000000000000000000000000000000dEaD";

export interface Target extends Mounted {
  readonly api: PartnerApi;
  get(path: string, key?: string | null): Promise<SentResponse>;
  /** A signed event to `path` (default the inbound route under `/api/partner`). */
  postEvent(body: string, overrides?: Record<string, string | null>, path?: string): Promise<SentResponse>;
}

export async function start(
  mount: Mount,
  backend: ApiBackend | undefined,
  options: Partial<PartnerApiOptions> = {},
): Promise<Target> {
  const api = createPartnerApi({
    environment: "sandbox",
    ...loadSandbox(),
    ...(await backend?.stores()),
    rateLimitOverride: 1_000_000,
    ...options,
  });
  const mounted = await mount(api);
  return {
    api,
    send: (r) => mounted.send(r),
    close: async () => {
      await mounted.close();
      await api.close();
    },
    get: (path, key = KEY) =>
      mounted.send({ method: "GET", path, headers: key === null ? {} : { "x-api-key": key } }),
    postEvent: (body, overrides = {}, path = `${P}/webhooks/inbound`) => {
      const headers: Record<string, string> = {};
      const defaults: Record<string, string> = {
        "content-type": "application/json",
        "x-api-key": KEY,
        "x-partner-event": eventTypeOf(body),
        "x-partner-signature": signBody(DEMO.signingSecret, new TextEncoder().encode(body)),
        "idempotency-key": `key-${crypto.randomUUID()}`,
      };
      for (const [name, value] of Object.entries({ ...defaults, ...overrides })) {
        if (value !== null) headers[name] = value;
      }
      return mounted.send({ method: "POST", path, headers, body });
    },
  };
}

function eventTypeOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { event_type?: unknown };
    return typeof parsed.event_type === "string" ? parsed.event_type : "partner.user.created";
  } catch {
    return "partner.user.created";
  }
}

export function eventBody(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: `u_${crypto.randomUUID()}`, country: "DE" },
    ...overrides,
  });
}

export function json(res: SentResponse): Record<string, unknown> {
  return JSON.parse(res.text) as Record<string, unknown>;
}

/** Asserts a problem+json error with this status and code, and returns its body. */
export function expectProblem(
  res: SentResponse,
  status: number,
  code: keyof typeof ERRORS,
): Record<string, unknown> {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text}`);
  assert.match(res.headers["content-type"] ?? "", /^application\/problem\+json/);
  const body = json(res);
  Problem.parse(body);
  assert.equal(body["code"], code, res.text);
  assert.equal(body["status"], status);
  assert.equal(body["success"], false);
  assert.equal(body["type"], `https://partner-yield.dev/errors/${code}`);
  assert.equal(body["request_id"], res.headers["x-request-id"]);
  assert.equal(ERRORS[code].status, status);
  return body;
}

/** The suite's shared target (started before the first test), and how to start one of your own. */
export interface SuiteContext {
  /** The shared target; usable inside tests, once the suite's `before` has started it. */
  readonly t: Target;
  /** A new target, mounted and backed like the shared one, with these options on top. */
  start(options?: Partial<PartnerApiOptions>): Promise<Target>;
  /** A new rate limiter of the suite's backend (memory by default), for APIs that share one. */
  newLimiter(): Promise<RateLimiter>;
}
