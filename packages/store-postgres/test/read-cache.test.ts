/**
 * The read cache across two instances (two store sets, each with its pool and its cache, on one
 * database): a change made through one instance's admin, the fixture import or a hand-written SQL
 * statement is honoured by the other; a notification that arrives while a read-through is in
 * flight is not overwritten by the older row; migration 0004 announces what the cache serves and
 * nothing else.
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { createPartnerApi, type ProductRecord } from "@partner-yield/core";
import { DEMO, gate, loadSandbox } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import pg from "pg";
import {
  createPool,
  dataSetOf,
  importData,
  PostgresPartnerAdmin,
  PostgresPriceTable,
  type PostgresStores,
} from "../src/index.js";
import { cachedStores, eventually, importSample, type Sample, trusted } from "./read-cache-support.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("read_cache") : undefined;

describe("the read cache of two instances on one database", () => {
  let sample: Sample;
  let a: PostgresStores;
  let b: ReturnType<typeof cachedStores>;
  const pools: pg.Pool[] = [];

  before(async () => {
    if (db === undefined) return;
    sample = await importSample(db.pool);
    const pool = () => {
      const made = createPool({ connectionString: db.url, max: 4 });
      pools.push(made);
      return made;
    };
    a = cachedStores(pool(), "py-cache-a");
    b = cachedStores(pool(), "py-cache-b");
    await eventually("both caches subscribed", () => trusted(a) && trusted(b));
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await Promise.all(pools.map((p) => p.end()));
  });

  const adminOf = (stores: PostgresStores) => new PostgresPartnerAdmin(stores.pool);
  const newKey = async (): Promise<{ id: string; hash: string }> => {
    const issued = await adminOf(a).createKey({ partnerId: sample.partnerId, environment: "sandbox" });
    assert.ok(issued.ok);
    const id = issued.value.summary.id;
    const row = await db!.pool.query<{ key_hash: string }>("select key_hash from api_keys where id = $1", [
      id,
    ]);
    return { id, hash: row.rows[0]!.key_hash };
  };
  /**
   * The key is in the instance's cache: a lookup answers with a value, not a promise (a read-through
   * does not store its row when a change to the table was notified meanwhile: then it is read again).
   */
  const cachedKeyIn = async (stores: PostgresStores, hash: string) => {
    await eventually("the key cached", async () => {
      const answer = stores.keys.findByHash(hash);
      assert.equal((await answer)?.status, "active");
      assert.ok(!(answer instanceof Promise), "a hit is answered at once");
    });
  };

  test("a key revoked through the other instance's admin, or by an UPDATE, is refused", async () => {
    const byAdmin = await newKey();
    const bySql = await newKey();
    await cachedKeyIn(b, byAdmin.hash);
    await cachedKeyIn(b, bySql.hash);
    const revoked = await adminOf(a).revokeKey(byAdmin.id);
    assert.ok(revoked.ok && revoked.value.changed);
    await eventually("the revocation honoured", async () => {
      assert.equal((await b.keys.findByHash(byAdmin.hash))?.status, "revoked");
    });
    await db!.pool.query("update api_keys set status = 'revoked', revoked_at = now() where id = $1", [
      bySql.id,
    ]);
    await eventually("the UPDATE honoured", async () => {
      assert.equal((await b.keys.findByHash(bySql.hash))?.status, "revoked");
    });
  });

  test("an unknown key hash, cached as unknown, is found once it is inserted", async () => {
    const hash = "ab".repeat(32);
    assert.equal(await b.keys.findByHash(hash), undefined);
    await eventually("cached as unknown", async () => {
      const answer = b.keys.findByHash(hash);
      assert.equal(await answer, undefined);
      return !(answer instanceof Promise);
    });
    await db!.pool.query(
      "insert into api_keys (partner_id, environment, key_hash) values ($1, 'sandbox', $2)",
      [sample.partnerId, hash],
    );
    await eventually("the insert honoured", async () => {
      assert.equal((await b.keys.findByHash(hash))?.status, "active");
    });
  });

  test("a signing secret revoked through the admin, or by an UPDATE, stops verifying", async () => {
    const admin = adminOf(a);
    const first = await admin.createSigningSecret(sample.partnerId);
    const second = await admin.createSigningSecret(sample.partnerId);
    assert.ok(first.ok && second.ok);
    const secrets = async () => (await b.partners.getPartner(sample.partnerId))?.signingSecrets ?? [];
    await eventually("both secrets served", async () => {
      const held = await secrets();
      assert.ok(held.includes(first.value.signingSecret) && held.includes(second.value.signingSecret));
    });
    await eventually(
      "the partner cached",
      () => !(b.partners.getPartner(sample.partnerId) instanceof Promise),
    );
    assert.ok((await admin.revokeSigningSecret(sample.partnerId, first.value.summary.id)).ok);
    await eventually("the admin's revocation honoured", async () => {
      assert.ok(!(await secrets()).includes(first.value.signingSecret));
    });
    await db!.pool.query("update signing_secrets set status = 'revoked', revoked_at = now() where id = $1", [
      second.value.summary.id,
    ]);
    await eventually("the UPDATE honoured", async () => {
      assert.ok(!(await secrets()).includes(second.value.signingSecret));
    });
  });

  test("a partner renamed by an UPDATE is answered with its new name, in the product answers too", async () => {
    const api = createPartnerApi({ environment: "sandbox", ...b });
    const partnerOf = async () => {
      const answer = await api.handle({
        method: "GET",
        path: `/api/partner/products/${sample.slug}`,
        headers: { "x-api-key": DEMO.sandboxApiKey },
      });
      assert.equal(answer.status, 200, String(answer.body));
      return (JSON.parse(String(answer.body)) as { data: { partner: string } }).data.partner;
    };
    const before = await partnerOf();
    await eventually(
      "the partner cached",
      () => !(b.partners.getPartner(sample.partnerId) instanceof Promise),
    );
    await db!.pool.query("update partners set name = $2 where id = $1", [
      sample.partnerId,
      `${before} Renamed`,
    ]);
    await eventually("the rename honoured", async () => {
      assert.equal(await partnerOf(), `${before} Renamed`);
    });
    await db!.pool.query("update partners set name = $2 where id = $1", [sample.partnerId, before]);
    await eventually("the name restored", async () => {
      assert.equal(await partnerOf(), before);
    });
  });

  const product = async (stores: PostgresStores) =>
    (await stores.products.getProduct(sample.partnerId, sample.slug)) as ProductRecord;
  const listed = async (stores: PostgresStores) =>
    (await stores.products.listProducts(sample.partnerId)).find((p) => p.slug === sample.slug)!;
  /** The sandbox's data set with this product changed: what `db import-fixtures --overwrite` would write. */
  const importWith = async (change: (record: ProductRecord) => ProductRecord) => {
    const data = dataSetOf(loadSandbox());
    const products = data.products.map((p) =>
      p.partnerId === sample.partnerId && p.slug === sample.slug ? change(p) : p,
    );
    await importData(db!.pool, { ...data, products }, { overwrite: true });
  };

  test("a product paused by an UPDATE, or by the import, is served paused", async () => {
    assert.equal((await product(b)).status, "active");
    assert.equal((await listed(b)).status, "active");
    await eventually("the product cached", async () => {
      const answer = b.products.getProduct(sample.partnerId, sample.slug);
      await answer;
      return !(answer instanceof Promise);
    });
    await db!.pool.query("update products set status = 'paused' where partner_id = $1 and slug = $2", [
      sample.partnerId,
      sample.slug,
    ]);
    await eventually("the pause honoured", async () => {
      assert.equal((await product(b)).status, "paused");
      assert.equal((await listed(b)).status, "paused");
    });
    await importWith((p) => ({ ...p, status: "active" }));
    await eventually("the import's status honoured", async () => {
      assert.equal((await product(b)).status, "active");
    });
    await importWith((p) => ({ ...p, status: "paused" }));
    await eventually("the import's pause honoured", async () => {
      assert.equal((await product(b)).status, "paused");
      assert.equal((await listed(b)).status, "paused");
    });
    await importWith((p) => p);
  });

  test("metrics changed by an UPDATE, or by the import, are served", async () => {
    const before = (await product(b)).metrics!;
    await db!.pool.query("update products set underlying_apy = 0.0777 where partner_id = $1 and slug = $2", [
      sample.partnerId,
      sample.slug,
    ]);
    await eventually("the UPDATE's metrics honoured", async () => {
      assert.equal((await product(b)).metrics?.underlyingApyWad, 77_700_000_000_000_000n);
    });
    await importWith((p) => ({
      ...p,
      metrics: { ...before, wrapperTotalAssets: before.wrapperTotalAssets + 1n },
    }));
    await eventually("the import's metrics honoured", async () => {
      const metrics = (await product(b)).metrics!;
      assert.deepEqual(
        [metrics.underlyingApyWad, metrics.wrapperTotalAssets],
        [before.underlyingApyWad, before.wrapperTotalAssets + 1n],
      );
    });
    await importWith((p) => p);
  });

  test("a price changed by an UPDATE, or by the import, is served (with its time)", async () => {
    const record = await product(b);
    const table = new PostgresPriceTable(b.pool, b.readCache);
    const price = async () => b.prices.getUsdPriceWad(record);
    const original = await price();
    assert.ok(original !== undefined);
    await eventually("the price cached", async () => {
      const answer = b.prices.getUsdPriceWad(record);
      await answer;
      return !(answer instanceof Promise);
    });
    await db!.pool.query(
      "update asset_prices set usd_price = 1.2345, updated_at = now() - interval '1 day' where chain_id = $1 and asset_address = lower($2)",
      [record.chainId, record.assetAddress],
    );
    await eventually("the UPDATE's price honoured", async () => {
      assert.equal(await price(), 1_234_500_000_000_000_000n);
      const row = await table.getPrice(record.chainId, record.assetAddress);
      assert.ok(row !== undefined && Date.now() - row.updatedAtMs > 3_600_000, "its time too");
    });
    const data = dataSetOf(loadSandbox());
    const prices = data.prices.map((p) =>
      p.chainId === record.chainId && p.assetAddress.toLowerCase() === record.assetAddress.toLowerCase()
        ? { ...p, usdPriceWad: p.usdPriceWad + 1n }
        : p,
    );
    await importData(db!.pool, { ...data, prices }, { overwrite: true });
    await eventually("the import's price honoured", async () => {
      assert.equal(await price(), original + 1n);
    });
    await importData(db!.pool, data, { overwrite: true });
  });

  test("a vault's totals and a wallet's shares changed by an UPDATE are served", async () => {
    const record = await product(b);
    const wrapper = record.wrapperAddress.toLowerCase();
    const wallet = `0x${"7".repeat(40)}`;
    await db!.pool.query(
      `insert into vaults (chain_id, wrapper_address, total_assets, total_supply) values ($1, $2, 1000, 1000)
       on conflict (chain_id, wrapper_address) do nothing`,
      [record.chainId, wrapper],
    );
    const holding = () => b.positions.getHolding(record, wallet);
    /** The wallet's figures (the answer also carries the vault's, its audit view). */
    const figures = async (answer: ReturnType<typeof holding>) => {
      const { shares, assets } = await answer;
      return { shares, assets };
    };
    await eventually("an empty wallet cached too", async () => {
      const answer = holding();
      assert.deepEqual(await figures(answer), { shares: 0n, assets: 0n });
      return !(answer instanceof Promise);
    });
    await db!.pool.query(
      "insert into vault_holdings (chain_id, wrapper_address, wallet_address, shares) values ($1, $2, $3, 500)",
      [record.chainId, wrapper, wallet],
    );
    await eventually("the new holding honoured", async () => {
      assert.equal((await holding()).shares, 500n);
    });
    const before = await holding();
    await db!.pool.query(
      "update vaults set total_assets = total_assets * 2 where chain_id = $1 and wrapper_address = $2",
      [record.chainId, wrapper],
    );
    await eventually("the vault's totals honoured", async () => {
      assert.ok((await holding()).assets > before.assets);
    });
    await db!.pool.query(
      "update vault_holdings set shares = 0 where chain_id = $1 and wrapper_address = $2 and wallet_address = $3",
      [record.chainId, wrapper, wallet],
    );
    await eventually("the emptied wallet honoured", async () => {
      assert.deepEqual(await figures(holding()), { shares: 0n, assets: 0n });
    });
  });
});

describe("a notification that arrives while a read-through is in flight", () => {
  test("wins: the row the read-through found is answered, not stored", async () => {
    const sample = await importSample(db!.pool);
    const pool = createPool({ connectionString: db!.url, max: 4 });
    // The key lookups of this pool wait for `release` after their answer came back.
    let arrived: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (arrived = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = true;
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (...args) => {
      const result = await query(...args);
      if (holding && typeof args[0] === "string" && args[0].includes("from api_keys where key_hash")) {
        holding = false;
        arrived();
        await released;
      }
      return result;
    };
    const stores = cachedStores(pool, "py-cache-race");
    try {
      await eventually("the cache subscribed", () => trusted(stores));
      const inFlight = stores.keys.findByHash(sample.keyHash);
      await answered; // the row was read: active
      const changesBefore = stores.readCache.state().changes;
      await db!.pool.query("update api_keys set status = 'revoked', revoked_at = now() where id = $1", [
        sample.keyId,
      ]);
      await eventually(
        "the revocation's notification applied",
        () => stores.readCache.state().changes > changesBefore,
      );
      release();
      assert.equal((await inFlight)?.status, "active", "the lookup read the row before the revocation");
      assert.ok(trusted(stores));
      assert.equal((await stores.keys.findByHash(sample.keyHash))?.status, "revoked", "never the stale row");
    } finally {
      release();
      await stores.close();
      await pool.end();
    }
  });
});

describe("migration 0004's notifications", () => {
  test("announce a served change with the row's key, and nothing for last_used_at alone", async () => {
    await importData(db!.pool, dataSetOf(loadSandbox()));
    const key = (
      await db!.pool.query<{ id: string; key_hash: string; partner_id: string }>(
        "select id::text as id, key_hash, partner_id from api_keys order by id limit 1",
      )
    ).rows[0]!;
    const sample = { keyId: key.id, keyHash: key.key_hash, partnerId: key.partner_id };
    const client = new pg.Client({ connectionString: db!.url });
    await client.connect();
    try {
      const payloads: string[] = [];
      client.on("notification", (message) => payloads.push(message.payload ?? ""));
      await client.query("listen partner_yield_changes");
      await db!.pool.query("update api_keys set last_used_at = now() where id = $1", [sample.keyId]);
      await db!.pool.query("update products set updated_at = now() where partner_id = $1", [
        sample.partnerId,
      ]);
      await db!.pool.query("update api_keys set label = 'relabelled' where id = $1", [sample.keyId]);
      await eventually("a notification", () => payloads.length > 0);
      assert.deepEqual(
        payloads.map((p) => JSON.parse(p)),
        [{ table: "api_keys", keys: [[sample.keyHash]] }],
      );
      payloads.length = 0;
      await db!.pool.query("truncate vault_holdings");
      await eventually("a notification", () => payloads.length > 0);
      assert.deepEqual(JSON.parse(payloads[0]!), { table: "vault_holdings" });
    } finally {
      await client.end();
    }
  });
});
