/** The API suite in-process: `handle()` called directly, no socket. */
import type { PartnerApiHandler } from "../../src/index.js";
import { runApiSuite } from "./api-suite/index.js";

runApiSuite("in-process handle()", async (api: PartnerApiHandler) => ({
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
}));
