/**
 * The PostgreSQL side of the metrics: the pool's gauges, the read cache's, and the age of each
 * product's price from `asset_prices.updated_at` (one statement per scrape, aged by the database's
 * own clock, so a skewed server clock cannot hide a stale price).
 * @module
 */
import type { PostgresHandles } from "./backends.js";
import type { EventLogSample, PriceAgeSample, ServerMetrics } from "./metrics.js";

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

const PRUNED = `select coalesce(sum((after->>'deleted')::bigint), 0)::text as pruned
from admin_audit where command = 'events prune' and outcome = 'done'`;

/** The consumers' lag and the events pruned so far (admin_audit's `events prune` rows). */
export async function postgresEventLog(pool: PostgresHandles["pool"]): Promise<EventLogSample> {
  const { PostgresEventConsumers } = await import("@partner-yield/store-postgres");
  const [consumers, pruned] = await Promise.all([
    new PostgresEventConsumers(pool, { connection: false }).consumers(),
    pool.query<{ pruned: string }>(PRUNED),
  ]);
  return { consumers, pruned: Number(pruned.rows[0]?.pruned ?? 0) };
}

/** Registers the pool, the read cache (when on), the price ages and the event log with `metrics`. */
export function watchPostgres(metrics: ServerMetrics, handles: PostgresHandles): void {
  metrics.setPool(handles.pool);
  if (handles.readCache !== undefined) metrics.setReadCache(handles.readCache);
  metrics.setPriceAges(() => postgresPriceAges(handles.pool));
  metrics.setEventLog(() => postgresEventLog(handles.pool));
}
