/** `toPlainRequest` on a bare node:http server: what Express, Fastify or Koa users mount the core with. */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { createPartnerApi } from "@partner-yield/core";
import { eventBody, eventHeaders, INBOUND, KEY } from "@partner-yield/node-adapter/testing";
import { DEFAULT_FIXTURES_DIR, loadFixtureDir, toPlainRequest } from "../src/index.js";

describe("toPlainRequest", () => {
  let server: Server;
  let url: string;
  const claimed = new Map<string, string>();
  before(async () => {
    const api = createPartnerApi({
      environment: "sandbox",
      ...loadFixtureDir(DEFAULT_FIXTURES_DIR),
      failedAuthPerMinute: 2,
    });
    server = createServer(async (req, res) => {
      // A proxy's X-Forwarded-For stands in for the address a framework would report behind one.
      const forwarded = req.headers["x-forwarded-for"];
      const out = await api.handle(
        toPlainRequest(req, typeof forwarded === "string" ? { clientAddress: forwarded } : {}),
      );
      claimed.set(out.headers["x-request-id"]!, String(req.readableEnded));
      res.writeHead(out.status, out.headers).end(out.body ?? undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("a signed event reaches the core with its exact bytes, and a sane X-Request-Id is echoed", async () => {
    const body = eventBody();
    const res = await fetch(`${url}${INBOUND}`, {
      method: "POST",
      headers: { ...eventHeaders(body, `plain-${crypto.randomUUID()}`), "x-request-id": "trace-42" },
      body,
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get("x-request-id"), "trace-42");
    assert.equal(((await res.json()) as { duplicate: boolean }).duplicate, false);
  });

  test("the path and query are split as sent; a GET carries no body reader", async () => {
    const res = await fetch(`${url}/api/partner/products/usdc-base-prime/yield-calc?amount=1000.50`, {
      headers: { "x-api-key": KEY },
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { data: { principal: string } }).data.principal, "1000.5");
  });

  test("the body is left unread when authentication fails first", async () => {
    const body = eventBody();
    const res = await fetch(`${url}${INBOUND}`, {
      method: "POST",
      headers: { ...eventHeaders(body, "unread"), "x-api-key": "", "x-request-id": "unread-1" },
      body,
    });
    assert.equal(res.status, 401);
    assert.equal(claimed.get("unread-1"), "false");
  });

  test("failed authentications are limited per client address: the socket's, or the one given", async () => {
    const guess = (from?: string) =>
      fetch(`${url}/api/partner/products`, {
        headers: { "x-api-key": "ypk_test_nope", ...(from === undefined ? {} : { "x-forwarded-for": from }) },
      }).then((r) => r.status);
    assert.deepEqual(
      [await guess("198.51.100.1"), await guess("198.51.100.1"), await guess("198.51.100.1")],
      [401, 401, 429],
    );
    // Another address is not blocked; the socket's own address (127.0.0.1) counts on its own.
    assert.equal(await guess("198.51.100.2"), 401);
    assert.deepEqual([await guess(), await guess(), await guess()], [401, 401, 429]);
  });
});
