/**
 * `NODE_OPTIONS=--conditions=@partner-yield/source npx tsx bench/read-cache.ts`: what the read
 * cache of store-postgres costs and saves, on a database of its own with 100,000 API keys and
 * 10,000 products (one partner per 10 products; the keys are revoked, so reading them writes no
 * last_used_at and the figures are the lookups' alone): the heap the cache takes once every key and
 * every product has been read (after a full collection, against the heap before), a lookup on a
 * hit and one through to PostgreSQL (a cache-less store), and how long one UPDATE of every key
 * takes to reach the cache (its notification names the whole table: the keys do not fit in one),
 * and, one row at a time, how long after an INSERT returns its notification is applied.
 * `BENCH_KEYS` and `BENCH_PRODUCTS` change the counts.
 * @module
 */
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { ProductRecord } from "../packages/core/src/index.js";
import { createPool, createPostgresStores, migrate } from "../packages/store-postgres/src/index.js";
import { createBenchDatabase, dropLiveDatabases, PostgresUnreachableError } from "./pg-database.js";

const KEYS = Number(process.env["BENCH_KEYS"] ?? "100000");
const PRODUCTS = Number(process.env["BENCH_PRODUCTS"] ?? "10000");
const HIT_ROUNDS = 1_000_000;
const MISSES = 5_000;
const IN_FLIGHT = 20;
const NOTIFIED = 300;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapUsed(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** Runs `work(i)` for i in [0, n) with `IN_FLIGHT` at once. */
async function inFlight(n: number, work: (i: number) => unknown): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

async function main(): Promise<void> {
  const db = await createBenchDatabase(undefined, { empty: true });
  process.on("SIGINT", () => void dropLiveDatabases().finally(() => process.exit(130)));
  const pool = createPool({
    connectionString: db.url,
    max: IN_FLIGHT,
    statementTimeoutMs: 120_000,
    connectionTimeoutMs: 60_000,
  });
  try {
    await migrate(pool);
    const partners = Math.ceil(PRODUCTS / 10);
    await pool.query(
      `insert into partners (id, name) select 'p' || g, 'Partner ' || g from generate_series(1, $1) g`,
      [partners],
    );
    await pool.query(
      `insert into api_keys (partner_id, environment, key_hash, label, status, revoked_at)
       select 'p' || (1 + g % $2), 'sandbox', encode(sha256(g::text::bytea), 'hex'), 'key ' || g, 'revoked', now()
       from generate_series(1, $1) g`,
      [KEYS, partners],
    );
    await pool.query(
      `insert into products (partner_id, slug, chain, chain_id, wrapper_address, underlying_vault_address,
         asset_address, asset_symbol, asset_decimals, decimals_offset, status, service_fee_bps, partner_fee_bps,
         display_name, description, metrics_as_of_date, wrapper_total_assets, underlying_apy)
       select 'p' || (1 + (g - 1) / 10), 'product-' || g, 'base', 8453,
         '0x' || lpad(to_hex(g), 40, '0'), '0x' || lpad(to_hex(g + 1000000), 40, '0'),
         '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', 'USDC', 6, 6, 'active', 50, 50,
         'Product ' || g, 'A product of the read-cache benchmark', '2026-11-20', 12400000000000, 0.0523
       from generate_series(1, $1) g`,
      [PRODUCTS],
    );
    const hashes = (
      await pool.query<{ key_hash: string }>("select key_hash from api_keys order by id")
    ).rows.map((r) => r.key_hash);
    const productKeys = (
      await pool.query<{ partner_id: string; slug: string }>("select partner_id, slug from products")
    ).rows;

    const plain = createPostgresStores(pool);
    const before = heapUsed();
    const stores = createPostgresStores(pool, {
      readCache: { maxKeys: KEYS, maxProducts: PRODUCTS, maxPartners: partners },
    });
    const cache = stores.readCache!;
    while (!cache.state().trusted) await new Promise((r) => setTimeout(r, 20));
    const fill = performance.now();
    await inFlight(hashes.length, (i) => stores.keys.findByHash(hashes[i]!));
    await inFlight(productKeys.length, (i) =>
      stores.products.getProduct(productKeys[i]!.partner_id, productKeys[i]!.slug),
    );
    const fillMs = performance.now() - fill;
    process.stderr.write(`bench/read-cache: filled in ${fillMs.toFixed(0)} ms\n`);
    const state = cache.state();
    const after = heapUsed();
    const held = after - before;

    // A hit: the value itself, no statement.
    let found = 0;
    const hitStart = performance.now();
    for (let i = 0; i < HIT_ROUNDS; i++)
      if (stores.keys.findByHash(hashes[i % hashes.length]!) !== undefined) found++;
    const keyHitNs = ((performance.now() - hitStart) * 1e6) / HIT_ROUNDS;
    const productStart = performance.now();
    for (let i = 0; i < HIT_ROUNDS; i++) {
      const p = productKeys[i % productKeys.length]!;
      if (stores.products.getProduct(p.partner_id, p.slug) !== undefined) found++;
    }
    const productHitNs = ((performance.now() - productStart) * 1e6) / HIT_ROUNDS;

    // Through to PostgreSQL: the same lookups on the cache-less stores, IN_FLIGHT at once.
    const missStart = performance.now();
    await inFlight(MISSES, (i) => plain.keys.findByHash(hashes[(i * 7919) % hashes.length]!));
    const keyMissUs = ((performance.now() - missStart) * 1e3) / MISSES;
    const productMissStart = performance.now();
    await inFlight(MISSES, (i) => {
      const p = productKeys[(i * 7919) % productKeys.length]!;
      return plain.products.getProduct(p.partner_id, p.slug) as Promise<ProductRecord | undefined>;
    });
    const productMissUs = ((performance.now() - productMissStart) * 1e3) / MISSES;

    // One statement changing every key: its notification names the table, the cache drops all keys.
    const changesBefore = cache.state().changes;
    const update = performance.now();
    await pool.query("update api_keys set label = label || '.'");
    const committedMs = performance.now() - update;
    while (cache.state().changes === changesBefore) await new Promise((r) => setImmediate(r));
    const droppedMs = performance.now() - update;

    // One row at a time, nothing else running: from an INSERT's return to its notification applied.
    const lags: number[] = [];
    for (let i = 0; i < NOTIFIED; i++) {
      const seen = cache.state().changes;
      await pool.query(
        "insert into api_keys (partner_id, environment, key_hash) values ('p1', 'sandbox', $1)",
        [`f${i.toString(16).padStart(63, "0")}`],
      );
      const returned = performance.now();
      while (cache.state().changes === seen) await new Promise((r) => setImmediate(r));
      lags.push(performance.now() - returned);
    }
    lags.sort((x, y) => x - y);
    const lag = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))]!.toFixed(2);

    const mib = (bytes: number) => (bytes / 1048576).toFixed(1);
    console.log(
      [
        `read cache, ${KEYS} keys and ${PRODUCTS} products (${partners} partners), node ${process.version}`,
        `  entries: ${JSON.stringify(state.entries)} (filled in ${fillMs.toFixed(0)} ms, ${IN_FLIGHT} reads at once)`,
        `  heap: ${mib(before)} MiB before, ${mib(after)} MiB filled: ${mib(held)} MiB held, ` +
          `about ${(held / (KEYS + PRODUCTS)) | 0} B an entry`,
        `  hit: key ${keyHitNs.toFixed(0)} ns, product ${productHitNs.toFixed(0)} ns (${HIT_ROUNDS} lookups each; ${found} found)`,
        `  through to PostgreSQL (no cache, ${IN_FLIGHT} at once): key ${keyMissUs.toFixed(1)} us, product ${productMissUs.toFixed(1)} us a lookup (throughput)`,
        `  one UPDATE of all ${KEYS} keys: committed in ${committedMs.toFixed(0)} ms, the cache emptied of keys ${(droppedMs - committedMs).toFixed(1)} ms after its return`,
        `  ${NOTIFIED} single-row INSERTs, from each one's return to its notification applied: p50 ${lag(0.5)} ms, p99 ${lag(0.99)} ms, max ${lag(1)} ms`,
      ].join("\n"),
    );
    await stores.close();
  } finally {
    await pool.end();
    await db.drop();
  }
}

main().catch(async (error: unknown) => {
  await dropLiveDatabases();
  console.error(error instanceof PostgresUnreachableError ? error.message : error);
  process.exit(1);
});
