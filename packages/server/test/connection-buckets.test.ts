/**
 * The per-address connection cap counts an IPv6 client by its /64 (configurable), so one
 * customer's 2^64 addresses are one address; an IPv4-mapped address is its IPv4 address. Driven
 * with stand-in sockets: a test machine has no /64 of its own to connect from.
 */
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { test } from "node:test";
import { guardConnections } from "@partner-yield/node-adapter";
import { parseCommandLine, UsageError } from "../src/cli-options.js";

class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string | undefined) {
    super();
  }
  destroy(): void {
    this.destroyed = true;
    this.emit("close");
  }
}

/** Accepts a connection from each address in turn; the addresses whose connection was closed at once. */
function accept(
  server: EventEmitter,
  addresses: readonly string[],
): { refused: string[]; sockets: FakeSocket[] } {
  const refused: string[] = [];
  const sockets: FakeSocket[] = [];
  for (const address of addresses) {
    const socket = new FakeSocket(address);
    server.emit("connection", socket as unknown as Socket);
    if (socket.destroyed) refused.push(address);
    else sockets.push(socket);
  }
  return { refused, sockets };
}

test("one /64 is one address for the cap, whatever its 64 low bits and however it is written", () => {
  const server = new EventEmitter();
  const guard = guardConnections(server as unknown as Server, {
    maxConnections: 100,
    maxConnectionsPerAddress: 3,
  });
  const { refused, sockets } = accept(server, [
    "2001:db8:1:2::1",
    "2001:db8:1:2:ffff:ffff:ffff:ffff",
    "2001:0DB8:0001:0002:0:0:0:7",
    "2001:db8:1:2::8",
    "2001:db8:1:3::1",
  ]);
  assert.deepEqual(
    refused,
    ["2001:db8:1:2::8"],
    "the fourth connection of the /64 is refused; the next /64 is not",
  );
  assert.equal(guard.addressOf(sockets[0] as unknown as Socket), "2001:db8:1:2::/64");
  sockets[0]!.destroy();
  assert.deepEqual(accept(server, ["2001:db8:1:2::9"]).refused, [], "a closed connection frees its place");
  guard.stop();
});

test("the prefix length is configurable; IPv4-mapped addresses are their IPv4 address", () => {
  const server = new EventEmitter();
  const guard = guardConnections(server as unknown as Server, {
    maxConnections: 100,
    maxConnectionsPerAddress: 1,
    ipv6PrefixLength: 48,
  });
  const { refused, sockets } = accept(server, [
    "2001:db8:1:2::1",
    "2001:db8:1:3::1",
    "2001:db8:2::1",
    "::ffff:192.0.2.1",
    "192.0.2.1",
    "192.0.2.2",
  ]);
  assert.deepEqual(refused, ["2001:db8:1:3::1", "192.0.2.1"]);
  assert.equal(guard.addressOf(sockets[2] as unknown as Socket), "192.0.2.1");
  guard.stop();
  assert.throws(
    () => guardConnections(new EventEmitter() as unknown as Server, { ipv6PrefixLength: 0 }),
    RangeError,
  );
});

test("serve --ipv6-prefix-length: 64 by default, 1 to 128", () => {
  const config = (argv: string[], env: Record<string, string> = {}) => {
    const command = parseCommandLine(["serve", ...argv], env);
    assert.equal(command.command, "serve");
    return command.command === "serve" ? command.config : undefined;
  };
  assert.equal(config([])?.connections.ipv6PrefixLength, 64);
  assert.equal(config(["--ipv6-prefix-length", "56"])?.connections.ipv6PrefixLength, 56);
  assert.equal(config([], { PARTNER_YIELD_IPV6_PREFIX_LENGTH: "128" })?.connections.ipv6PrefixLength, 128);
  for (const bad of ["0", "129", "64.5", "x"])
    assert.throws(() => parseCommandLine(["serve", "--ipv6-prefix-length", bad], {}), UsageError, bad);
});
