/**
 * The yield-calc and position bodies are written without `JSON.stringify` of the answer object;
 * these properties check they are the same text it writes, for any quote, any position and any
 * slug (the one field not made by our formatters).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { toChecksumAddress } from "../../src/evm/address.js";
import { quoteBody } from "../../src/http/handlers/calculate-yield.js";
import { type PositionData, positionBody } from "../../src/http/handlers/get-position.js";
import { formatUnits } from "../../src/math/decimal.js";
import { MAX_UINT256, quoteYield, WAD } from "../../src/math/index.js";
import { fcParams } from "../../src/testing/index.js";

const decimals = fc.integer({ min: 0, max: 36 });

test("property: quoteBody(quote) is JSON.stringify({ success: true, data: quote })", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 1n, max: MAX_UINT256 }),
      decimals,
      // Losses down to −99.99…% and gains up to 1000 % a year.
      fc.bigInt({ min: -WAD + 1n, max: 10n * WAD }),
      fc.integer({ min: 0, max: 5_000 }),
      fc.integer({ min: 0, max: 5_000 }),
      (amountUnits, assetDecimals, underlyingApyWad, serviceFeeBps, partnerFeeBps) => {
        const data = quoteYield({
          amountUnits,
          assetDecimals,
          underlyingApyWad,
          serviceFeeBps,
          partnerFeeBps,
        });
        assert.equal(quoteBody(data), JSON.stringify({ success: true, data }));
      },
    ),
    fcParams(process.env),
  );
});

test("property: positionBody(data) is JSON.stringify({ success: true, data }), whatever the slug", () => {
  const hex40 = fc.stringMatching(/^[0-9a-f]{40}$/);
  const units = fc.bigInt({ min: 0n, max: MAX_UINT256 });
  fc.assert(
    fc.property(
      hex40,
      // Any text: quotes, backslashes, control characters and lone surrogates included.
      fc.oneof(fc.string({ unit: "binary" }), fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,63}$/)),
      units,
      units,
      units,
      decimals,
      // The audit view: none, without a price (no assets), or with one.
      fc.option(fc.tuple(fc.integer({ min: 0, max: 36 }), units, units, fc.option(units))),
      (hex, slug, shares, assets, cents, assetDecimals, audit) => {
        const data: PositionData = {
          wallet_address: toChecksumAddress(hex),
          product_slug: slug,
          shares: formatUnits(shares, assetDecimals + 12),
          assets: formatUnits(assets, assetDecimals),
          usd_value: formatUnits(cents, 2),
          ...(audit === null
            ? {}
            : {
                vault: {
                  decimals_offset: audit[0],
                  total_assets: audit[1].toString(),
                  total_supply: audit[2].toString(),
                  ...(audit[3] === null ? {} : { usd_price: formatUnits(audit[3], 18) }),
                },
              }),
        };
        assert.equal(positionBody(data), JSON.stringify({ success: true, data }));
      },
    ),
    fcParams(process.env),
  );
});

test("a quote and a position with an odd slug, written out", () => {
  const quote = quoteYield({
    amountUnits: 1_000_000_000n,
    assetDecimals: 6,
    underlyingApyWad: WAD / 20n,
    serviceFeeBps: 500,
    partnerFeeBps: 500,
  });
  assert.equal(
    quoteBody(quote),
    '{"success":true,"data":{"principal":"1000","annual_yield":"45","monthly_yield":"3.674809","net_apy_for_user":"0.045"}}',
  );
  assert.equal(
    positionBody({
      wallet_address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      product_slug: 'odd "slug"',
      shares: "1.5",
      assets: "-0.01",
      usd_value: "0",
    }),
    '{"success":true,"data":{"wallet_address":"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed","product_slug":"odd \\"slug\\"","shares":"1.5","assets":"-0.01","usd_value":"0"}}',
  );
});
