/**
 * `serve --redis-url` checks Redis's `maxmemory-policy` at start: any policy but `noeviction` may
 * evict the limiter's keys (a partner's window, a client's failed-authentication count), so the
 * server refuses to start (exit 1, saying how to fix it); a Redis that refuses CONFIG (a managed
 * one) is served with a warning that the policy could not be checked. Against a stand-in Redis
 * that answers just enough RESP: the shared test Redis's policy is not ours to change.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { after, test } from "node:test";
import { runCli, startServerProcess } from "./server-process.js";

/** A RESP server: INFO, PING and CONFIG GET (answered with `config`), +OK to anything else. */
async function fakeRedis(config: string): Promise<{ url: string; server: Server }> {
  const server = createServer((socket) => {
    let buffered = "";
    socket.on("error", () => undefined);
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      // Whole commands only: an array of bulk strings.
      for (;;) {
        const m = /^\*(\d+)\r\n/.exec(buffered);
        if (m === null) return;
        let at = m[0].length;
        const args: string[] = [];
        for (let i = 0; i < Number(m[1]); i++) {
          const len = /^\$(\d+)\r\n/.exec(buffered.slice(at));
          if (len === null) return;
          at += len[0].length;
          if (buffered.length < at + Number(len[1]) + 2) return;
          args.push(buffered.slice(at, at + Number(len[1])));
          at += Number(len[1]) + 2;
        }
        buffered = buffered.slice(at);
        const name = args[0]?.toUpperCase();
        if (name === "INFO") {
          const info = "# Server\r\nredis_version:7.2.0\r\nloading:0\r\n";
          socket.write(`$${info.length}\r\n${info}\r\n`);
        } else if (name === "PING") socket.write("+PONG\r\n");
        else if (name === "CONFIG") socket.write(config);
        else socket.write("+OK\r\n");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { url: `redis://127.0.0.1:${address.port}`, server };
}

const policy = (name: string) => `*2\r\n$16\r\nmaxmemory-policy\r\n$${name.length}\r\n${name}\r\n`;

test("an evicting policy: serve refuses to start (exit 1) and says how to fix it", async () => {
  for (const name of ["allkeys-lru", "volatile-ttl"]) {
    const redis = await fakeRedis(policy(name));
    const { code, stderr } = await runCli(["serve", "--port", "0", "--redis-url", redis.url]);
    assert.equal(code, 1, stderr);
    assert.match(stderr, new RegExp(`cannot start: redis: maxmemory-policy is ${name}`));
    assert.match(stderr, /maxmemory-policy noeviction/);
  }
});

test("CONFIG refused (a managed Redis): served, with a warning that the policy is not checked", async () => {
  const redis = await fakeRedis("-ERR unknown command 'CONFIG'\r\n");
  const server = await startServerProcess(["--redis-url", redis.url]);
  const { stdout, stderr } = server.output();
  await server.stop("SIGTERM");
  assert.match(
    stdout,
    /rate limits: Redis redis:\/\/127\.0\.0\.1:\d+ \(shared by every instance; maxmemory-policy not checked;/,
  );
  assert.match(
    stderr,
    /"level":"warn","msg":"warning",[^\n]*"detail":"could not read Redis's maxmemory-policy \(ERR unknown command 'CONFIG'\); it must be noeviction/,
  );
});

test("noeviction: served, the banner names the policy", async () => {
  const redis = await fakeRedis(policy("noeviction"));
  const server = await startServerProcess(["--redis-url", redis.url]);
  const { stdout, stderr } = server.output();
  await server.stop("SIGTERM");
  assert.match(stdout, /maxmemory-policy noeviction;/);
  assert.doesNotMatch(stderr, /warning/);
});
