/** Express 5 with `@partner-yield/express`: the API as a middleware under its base path, beside the app's routes. */
import type { PartnerApi } from "@partner-yield/core";
import { partnerYield } from "@partner-yield/express";
import express from "express";
import type { Listening, ListenOptions } from "./listening.js";

export function createExpressApp(api: PartnerApi): express.Express {
  const app = express();
  // Before any body parser: the core reads the raw bytes, after authentication, and verifies the
  // HMAC over them. Behind a proxy, set "trust proxy": the core counts req.ip.
  app.use(api.basePath, partnerYield({ api }));
  return app;
}

export function start(api: PartnerApi, options: ListenOptions = {}): Promise<Listening> {
  const { port = 8787, host = "127.0.0.1" } = options;
  return new Promise((resolve) => {
    const server = createExpressApp(api).listen(port, host, () => {
      const { port: bound } = server.address() as { port: number };
      resolve({
        url: `http://${host}:${bound}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
