-- partner-yield schema 8: the event insert as a function whose statement is planned once per
-- connection, not at every execution (event-store.ts; docs/performance.md).
--
-- PostgresEventStore inserts a batch of events with one statement over parallel arrays. Sent as a
-- prepared statement, it is still planned at each execution: the arrays' lengths are part of a
-- custom plan's estimates, so a custom plan always looks cheaper than the generic one, and for a
-- lone event planning costs PostgreSQL about as much as the insert itself. Here the same statement
-- runs with plan_cache_mode = force_generic_plan: planned once per connection, for any batch.
--
-- The credential checks read api_keys and signing_secrets through LATERAL subqueries of one row
-- each, which PostgreSQL can only run per input row, by index (key_hash; partner_id and
-- secret_sha256): a generic plan assumes 100 input rows, and as EXISTS it could choose to hash a
-- whole table at each execution. 7263002 is the event log's advisory lock (EVENT_LOG_LOCK).
--
-- Additive: a release of schema 7 keeps its own statement and never calls the function.
-- compatible_from: 7

create function partner_yield_append_events(
  p_partner_id text[], p_environment text[], p_idempotency_key text[], p_fingerprint text[],
  p_event_type text[], p_occurred_at text[], p_data text[], p_raw_body text[],
  p_received_at timestamptz[], p_key_hash text[], p_secret_sha256 text[])
returns table (event_id text, event_partner_id text, event_environment text,
  event_idempotency_key text, refused_credential text)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
  return query
  with gate as materialized (select pg_advisory_xact_lock_shared(7263002) as locked),
  input as (
    select * from unnest(p_partner_id, p_environment, p_idempotency_key, p_fingerprint,
      p_event_type, p_occurred_at, p_data, p_raw_body, p_received_at, p_key_hash,
      p_secret_sha256) with ordinality
      as input(partner_id, environment, idempotency_key, fingerprint, event_type, occurred_at,
        data, raw_body, received_at, key_hash, secret_sha256, n)
  ),
  checked as materialized (
    select input.*,
      (input.key_hash is null or key_found.ok is not null) as key_ok,
      (input.secret_sha256 is null or secret_found.ok is not null) as secret_ok
    from input
    left join lateral (select true as ok from api_keys k where k.key_hash = input.key_hash
      and k.partner_id = input.partner_id and k.environment = input.environment
      and k.status = 'active' limit 1) key_found on true
    left join lateral (select true as ok from signing_secrets s
      where s.partner_id = input.partner_id and s.secret_sha256 = input.secret_sha256
        and s.status = 'active' limit 1) secret_found on true
  ),
  inserted as (
    insert into events (partner_id, environment, idempotency_key, fingerprint, event_type,
      occurred_at, data, raw_body, received_at)
    select checked.partner_id, checked.environment, checked.idempotency_key, checked.fingerprint,
      checked.event_type, checked.occurred_at, checked.data::jsonb, checked.raw_body,
      checked.received_at
    from gate, checked
    where checked.key_ok and checked.secret_ok
    order by checked.n
    on conflict (partner_id, environment, idempotency_key) do nothing
    returning events.id::text as id, events.partner_id, events.environment, events.idempotency_key
  )
  select inserted.id, inserted.partner_id, inserted.environment, inserted.idempotency_key,
    null::text
  from inserted
  union all
  select null::text, checked.partner_id, checked.environment, checked.idempotency_key,
    case when not checked.key_ok then 'api_key' else 'signing_secret' end
  from checked where not (checked.key_ok and checked.secret_ok);
end $$;
