import assert from "node:assert/strict";
import { test } from "node:test";
import { addressBucket } from "../../src/http/client-bucket.js";

test("an IPv6 address counts by its /64, in one canonical text", () => {
  // One /64, written every way a client or a socket could: one bucket.
  const spellings = [
    "2001:db8:1:2::1",
    "2001:DB8:1:2::ffff",
    "2001:0db8:0001:0002:0000:0000:0000:0001",
    "2001:db8:1:2:aaaa:bbbb:cccc:dddd",
    "2001:db8:1:2:0:0:0:0",
    "2001:db8:1:2::",
    "2001:db8:1:2::1%eth0",
    "2001:db8:1:2::192.0.2.1",
  ];
  for (const address of spellings) assert.equal(addressBucket(address), "2001:db8:1:2::/64", address);
  assert.equal(addressBucket("2001:db8:1:3::1"), "2001:db8:1:3::/64", "the next /64 is another bucket");
  assert.equal(addressBucket("::1"), "::/64");
  assert.equal(addressBucket("fe80::1%lo0"), "fe80::/64");
  assert.equal(addressBucket("2001:db8:1:2::/64"), "2001:db8:1:2::/64", "idempotent");
});

test("the prefix length is configurable; 128 is the canonical address", () => {
  assert.equal(addressBucket("2001:db8:1:2ff::1", { ipv6PrefixLength: 56 }), "2001:db8:1:200::/56");
  assert.equal(addressBucket("2001:db8:abcd:2::1", { ipv6PrefixLength: 48 }), "2001:db8:abcd::/48");
  assert.equal(addressBucket("2001:db8::7fff", { ipv6PrefixLength: 113 }), "2001:db8::/113");
  assert.equal(addressBucket("2001:DB8:0:0:1:0:0:1", { ipv6PrefixLength: 128 }), "2001:db8::1:0:0:1");
  assert.equal(addressBucket("2001:db8:0:1:0:0:0:1", { ipv6PrefixLength: 128 }), "2001:db8:0:1::1");
  assert.equal(addressBucket("1:0:0:2:0:0:0:3", { ipv6PrefixLength: 128 }), "1:0:0:2::3");
  assert.equal(addressBucket("1:2:3:4:5:6:7:8", { ipv6PrefixLength: 128 }), "1:2:3:4:5:6:7:8");
  for (const bad of [0, 129, 1.5, Number.NaN])
    assert.throws(() => addressBucket("::1", { ipv6PrefixLength: bad }), RangeError, String(bad));
});

test("an IPv4-mapped IPv6 address is its IPv4 address; IPv4 is itself", () => {
  assert.equal(addressBucket("::ffff:192.0.2.1"), "192.0.2.1");
  assert.equal(addressBucket("::FFFF:c000:0201"), "192.0.2.1");
  assert.equal(addressBucket("0:0:0:0:0:ffff:192.0.2.1"), "192.0.2.1");
  assert.equal(addressBucket("192.0.2.1"), "192.0.2.1");
  assert.equal(addressBucket("::ffff:192.0.2.1", { ipv6PrefixLength: 128 }), "192.0.2.1");
});

test("what is not an address is returned as given (lower case with a colon)", () => {
  for (const text of ["1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3", "g::1", "::1.2.3.400", "1.2.3.4::", ":::"])
    assert.equal(addressBucket(text), text.toLowerCase(), text);
  assert.equal(addressBucket("proxy.example"), "proxy.example");
});
