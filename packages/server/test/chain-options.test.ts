/**
 * Which command lines age prices: `--price-table`, or the database's table with `--database-url`
 * and `--rpc-url` or `--price-max-age`; the fixtures' prices have no times and are never aged.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ChainServeConfig, parseCommandLine, UsageError } from "../src/cli-options.js";

const DB = ["--database-url", "postgres://localhost/py"];
const RPC = ["--rpc-url", "base=http://127.0.0.1:8545"];

function chainOf(args: string[], env: Record<string, string> = {}): ChainServeConfig | undefined {
  const command = parseCommandLine(["serve", ...args], env);
  assert.equal(command.command, "serve");
  return command.command === "serve" ? command.config.chain : undefined;
}

test("the database's prices are aged with --rpc-url or --price-max-age (default 3600 s)", () => {
  assert.equal(chainOf(DB), undefined, "--database-url alone: nothing from chain, prices as stored");
  assert.deepEqual(chainOf([...DB, "--price-max-age", "120"]), {
    rpcUrls: [],
    priceTable: undefined,
    priceMaxAgeSeconds: 120,
    apyWindowBlocks: undefined,
  });
  assert.equal(chainOf([...DB, ...RPC])?.priceMaxAgeSeconds, 3600);
  assert.equal(chainOf(DB, { PARTNER_YIELD_PRICE_MAX_AGE: "90" })?.priceMaxAgeSeconds, 90);
  assert.equal(chainOf([...DB, ...RPC, "--price-table", "p.json"])?.priceTable, "p.json", "a file wins");
});

test("--price-max-age without a table that has times, or --apy-window-blocks without --rpc-url: refused", () => {
  for (const [args, message] of [
    [
      ["--price-max-age", "60"],
      /--price-max-age applies only with --rpc-url, --price-table or --database-url/,
    ],
    [
      ["--apy-window-blocks", "5", "--price-table", "p.json"],
      /--apy-window-blocks applies only with --rpc-url/,
    ],
    [[...DB, "--apy-window-blocks", "5"], /--apy-window-blocks applies only with --rpc-url/],
  ] as const)
    assert.throws(
      () => chainOf([...args]),
      (e: unknown) => e instanceof UsageError && message.test(e.message),
    );
});
