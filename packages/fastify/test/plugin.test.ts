/**
 * The plugin's rules one by one: where it mounts (the prefix must be the API's base path, or lead
 * it), every method Fastify routes answered by the core, the app's own hook errors left to the
 * app, and `partnerYieldFrameworkErrors`' fallback.
 */
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { createPartnerApi } from "@partner-yield/core";
import { DEFAULT_FIXTURES_DIR, DEMO_CREDENTIALS, loadFixtureDir } from "@partner-yield/node-adapter";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { partnerYield, partnerYieldFrameworkErrors } from "../src/index.js";

const data = loadFixtureDir(DEFAULT_FIXTURES_DIR);
const KEY = { "x-api-key": DEMO_CREDENTIALS.sandboxApiKey };

function apiAt(basePath: string) {
  return createPartnerApi({ environment: "sandbox", ...data, basePath });
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request with node:http (fetch refuses TRACE and sends nothing odd). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function listening(
  register: (app: FastifyInstance) => PromiseLike<unknown>,
  options: FastifyServerOptions = {},
) {
  const app = Fastify(options);
  await register(app);
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { app, port: (app.server.address() as { port: number }).port };
}

function problemCode(answer: Answer): string {
  assert.equal(answer.headers["content-type"], "application/problem+json; charset=utf-8", answer.body);
  return (JSON.parse(answer.body) as { code: string }).code;
}

describe("where the plugin mounts", () => {
  test("a prefix that is not the API's base path is an error at registration naming both", async () => {
    const app = Fastify();
    app.register(partnerYield, { api: apiAt("/api/partner"), prefix: "/yield/v1" });
    await assert.rejects(async () => {
      await app.ready();
    }, /answers under "\/api\/partner" but is registered under the prefix "\/yield\/v1"/);
    await app.close();
  });

  test("without a prefix, or under one that leads the base path, the API answers at its base path", async () => {
    for (const prefix of [undefined, "/yield"]) {
      const { app, port } = await listening((a) =>
        a.register(partnerYield, { api: apiAt("/yield/v1"), ...(prefix === undefined ? {} : { prefix }) }),
      );
      try {
        assert.equal((await send(port, "GET", "/yield/v1/products", KEY)).status, 200, String(prefix));
        assert.equal(problemCode(await send(port, "GET", "/yield/v1")), "not_found");
      } finally {
        await app.close();
      }
    }
  });
});

describe("every method Fastify routes, answered by the core", () => {
  test("OPTIONS, TRACE, PUT and QUERY are the core's 405 with Allow; HEAD is GET without a body", async () => {
    const { app, port } = await listening((a) =>
      a.register(partnerYield, { api: apiAt("/y"), prefix: "/y" }),
    );
    try {
      for (const method of ["OPTIONS", "TRACE", "PUT", "QUERY"]) {
        const answer = await send(port, method, "/y/products", KEY);
        assert.equal(answer.status, 405, `${method}: ${answer.body}`);
        assert.equal(problemCode(answer), "method_not_allowed");
        assert.equal(answer.headers["allow"], "GET, HEAD");
      }
      const head = await send(port, "HEAD", "/y/products", KEY);
      const get = await send(port, "GET", "/y/products", KEY);
      assert.equal(head.status, 200);
      assert.equal(head.body, "");
      assert.equal(head.headers["content-length"], String(Buffer.byteLength(get.body)));
    } finally {
      await app.close();
    }
  });

  test("a repeated Content-Type is the listener's 400, and closes the connection", async () => {
    const { app, port } = await listening((a) =>
      a.register(partnerYield, { api: apiAt("/y"), prefix: "/y" }),
    );
    try {
      const socket = connect(port, "127.0.0.1");
      let received = "";
      socket.setEncoding("utf8").on("data", (chunk: string) => {
        received += chunk;
      });
      socket.write(
        `POST /y/webhooks/inbound HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${KEY["x-api-key"]}\r\n` +
          "Content-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
      );
      await new Promise<void>((resolve) => socket.once("close", () => resolve()));
      assert.match(received, /^HTTP\/1\.1 400 /);
      assert.match(received, /\r\nconnection: close\r\n/i);
      assert.match(
        received,
        /"code":"invalid_parameter","detail":"the Content-Type header may appear only once"/,
      );
    } finally {
      await app.close();
    }
  });
});

describe("what stays the app's", () => {
  test("an error of the app's own hook on the API's routes goes to the app's error handler", async () => {
    const { app, port } = await listening(async (a) => {
      a.setErrorHandler((error, _request, reply) => reply.code(418).send({ mine: (error as Error).message }));
      a.addHook("onRequest", async (request) => {
        if (request.headers["x-blocked"] !== undefined) throw new Error("blocked by the app");
      });
      await a.register(partnerYield, { api: apiAt("/y"), prefix: "/y" });
    });
    try {
      const answer = await send(port, "GET", "/y/products", { ...KEY, "x-blocked": "1" });
      assert.equal(answer.status, 418);
      assert.deepEqual(JSON.parse(answer.body), { mine: "blocked by the app" });
    } finally {
      await app.close();
    }
  });

  test("partnerYieldFrameworkErrors: outside the mount, the fallback the app gives answers", async () => {
    const fallback = partnerYieldFrameworkErrors((error, _request, reply) => {
      reply.code(400).send({ app: error.code });
    });
    const { app, port } = await listening(
      (a) => a.register(partnerYield, { api: apiAt("/y"), prefix: "/y" }),
      {
        frameworkErrors: fallback,
      },
    );
    try {
      assert.equal(problemCode(await send(port, "GET", "/y/products/%FF")), "missing_api_key");
      assert.deepEqual(JSON.parse((await send(port, "GET", "/other/%FF")).body), { app: "FST_ERR_BAD_URL" });
    } finally {
      await app.close();
    }
  });
});
