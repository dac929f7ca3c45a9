/**
 * The middleware's rules one by one: a body parser that ran first is a 500 told to `onError` (never
 * a signature checked over other bytes), a mount where the API does not answer is a 500 naming
 * both paths, mounted at the root it passes the app's requests on, Express's case-insensitive
 * mount match is left to the core, and a request id given by an earlier middleware is used.
 */
import assert from "node:assert/strict";
import type { Server } from "node:http";
import { describe, test } from "node:test";
import { createPartnerApi, signBody } from "@partner-yield/core";
import {
  BodyAlreadyReadError,
  DEFAULT_FIXTURES_DIR,
  DEMO_CREDENTIALS,
  loadFixtureDir,
} from "@partner-yield/node-adapter";
import express from "express";
import { partnerYield } from "../src/index.js";

const data = loadFixtureDir(DEFAULT_FIXTURES_DIR);
const KEY = { "x-api-key": DEMO_CREDENTIALS.sandboxApiKey };
const PROBLEM = "application/problem+json; charset=utf-8";

function apiAt(basePath: string) {
  return createPartnerApi({ environment: "sandbox", ...data, basePath });
}

/** Listens on 127.0.0.1:0, runs `body` with the base URL, then closes the server. */
async function withApp(app: express.Express, body: (url: string) => Promise<void>): Promise<void> {
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  try {
    await body(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function signedEvent(idempotencyKey: string): RequestInit {
  const body = JSON.stringify({
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: crypto.randomUUID() },
  });
  return {
    method: "POST",
    headers: {
      ...KEY,
      "content-type": "application/json",
      "x-partner-event": "partner.user.created",
      "x-partner-signature": signBody(DEMO_CREDENTIALS.signingSecret, new TextEncoder().encode(body)),
      "idempotency-key": idempotencyKey,
      "x-request-id": idempotencyKey,
    },
    body,
  };
}

describe("partnerYield (Express)", () => {
  test("a body parser that ran first: the event is a 500 told to onError, and a GET still works", async () => {
    const errors: Array<{ error: unknown; requestId: string }> = [];
    const app = express();
    app.use(express.json());
    app.use(
      "/y",
      partnerYield({ api: apiAt("/y"), onError: (error, requestId) => errors.push({ error, requestId }) }),
    );
    await withApp(app, async (url) => {
      const res = await fetch(`${url}/y/webhooks/inbound`, signedEvent("parsed-first"));
      assert.equal(res.status, 500);
      assert.equal(res.headers.get("content-type"), PROBLEM);
      assert.equal(((await res.json()) as { code: string }).code, "internal_error");
      assert.equal(errors.length, 1);
      assert.ok(errors[0]!.error instanceof BodyAlreadyReadError);
      assert.equal(errors[0]!.requestId, "parsed-first");
      assert.equal((await fetch(`${url}/y/products`, { headers: KEY })).status, 200);
    });
  });

  test("mounted before the parser, the same event is accepted", async () => {
    const app = express();
    app.use("/y", partnerYield({ api: apiAt("/y") }));
    app.use(express.json());
    await withApp(app, async (url) => {
      const res = await fetch(
        `${url}/y/webhooks/inbound`,
        signedEvent(`parsed-after-${crypto.randomUUID()}`),
      );
      assert.equal(res.status, 200, await res.clone().text());
    });
  });

  test("mounted where the API does not answer: a 500 told to onError naming both paths", async () => {
    const errors: unknown[] = [];
    const app = express();
    app.use("/elsewhere", partnerYield({ api: apiAt("/y"), onError: (error) => errors.push(error) }));
    await withApp(app, async (url) => {
      const res = await fetch(`${url}/elsewhere/products`, { headers: KEY });
      assert.equal(res.status, 500);
      assert.equal(res.headers.get("content-type"), PROBLEM);
      assert.match(String(errors[0]), /answers under "\/y" but is mounted at "\/elsewhere"/);
    });
  });

  test("mounted at the root, it answers its base path and passes the app's requests on", async () => {
    const app = express();
    app.use(partnerYield({ api: apiAt("/y") }));
    app.get("/status", (_req, res) => {
      res.json({ ok: true });
    });
    await withApp(app, async (url) => {
      assert.equal((await fetch(`${url}/y/products`, { headers: KEY })).status, 200);
      assert.deepEqual(await (await fetch(`${url}/status`)).json(), { ok: true });
      assert.equal((await fetch(`${url}/yonder`)).status, 404, "Express's own 404");
    });
  });

  test("Express matches the mount in any case; the core answers such a path (404), as the listener", async () => {
    const app = express();
    app.use("/y/v1", partnerYield({ api: apiAt("/y/v1") }));
    await withApp(app, async (url) => {
      const res = await fetch(`${url}/Y/V1/products`, { headers: KEY });
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { code: string }).code, "not_found");
    });
  });

  test("requestId: an id an earlier middleware gave the request, when the client sent none", async () => {
    const app = express();
    app.use((req, _res, next) => {
      (req as typeof req & { id: string }).id = "pino-7";
      next();
    });
    app.use(
      "/y",
      partnerYield({ api: apiAt("/y"), requestId: (req) => (req as typeof req & { id?: string }).id }),
    );
    await withApp(app, async (url) => {
      const own = await fetch(`${url}/y/products`, { headers: KEY });
      assert.equal(own.headers.get("x-request-id"), "pino-7");
      const client = await fetch(`${url}/y/products`, { headers: { ...KEY, "x-request-id": "trace-1" } });
      assert.equal(client.headers.get("x-request-id"), "trace-1");
    });
  });
});
