/** The API suite again, over a real socket: node:http + createListener, client undici. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { PartnerApiHandler } from "@partner-yield/core";
import { runApiSuite } from "@partner-yield/node-adapter/testing";
import { Agent } from "undici";
import { createListener } from "../src/index.js";

runApiSuite("node:http server (createListener)", async (api: PartnerApiHandler) => {
  const listener = createListener(api, { log: "none" });
  const server = createServer(listener);
  server.on("checkContinue", listener.checkContinue);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dispatcher = new Agent({ connections: 8 });
  return {
    async send(req) {
      // dispatcher.request sends the path verbatim (a URL would normalise %2e%2e away).
      const res = await dispatcher.request({
        origin,
        path: req.path,
        method: req.method as "GET",
        headers: req.headers ?? {},
        body: req.body ?? null,
      });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
      }
      return { status: res.statusCode, headers, text: await res.body.text() };
    },
    async close() {
      await dispatcher.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
