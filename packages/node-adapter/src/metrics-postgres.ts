/**
 * The PostgreSQL side of the metrics: the pool's gauges, the read cache's, and the age of each
 * product's price from `asset_prices.updated_at` (one statement per scrape, aged by the database's
 * own clock, so a skewed server clock cannot hide a stale price).
 * @module
 */
import type { PostgresHandles } from "./backends.js";
import type { PriceAgeSample, ServerMetrics } from "./metrics.js";

// Each product with the price it is valued at (its asset's on its chain); a product without a
// price has no age (its positions are answered 503 anyway).
const PRICE_AGES = `select p.partner_id, p.slug,
  extract(epoch from (clock_timestamp() - a.updated_at))::float8 as age
from products p
join asset_prices a on a.chain_id = p.chain_id and a.asset_address = lower(p.asset_address)`;

/** Reads every product's price age (seconds). */
export async function postgresPriceAges(pool: PostgresHandles["pool"]): Promise<PriceAgeSample[]> {
  const result = await pool.query<{ partner_id: string; slug: string; age: number }>(PRICE_AGES);
  return result.rows.map((row) => ({ partner: row.partner_id, product: row.slug, ageSeconds: row.age }));
}

/** Registers the pool, the read cache (when on) and the price ages with `metrics`. */
export function watchPostgres(metrics: ServerMetrics, handles: PostgresHandles): void {
  metrics.setPool(handles.pool);
  if (handles.readCache !== undefined) metrics.setReadCache(handles.readCache);
  metrics.setPriceAges(() => postgresPriceAges(handles.pool));
}
