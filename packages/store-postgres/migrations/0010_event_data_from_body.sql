-- partner-yield schema 10: the event insert can take an event's `data` from its signed body in
-- PostgreSQL, so the server no longer sends the same content twice (event-store.ts;
-- docs/performance.md, "The event's data from its body").
--
-- The same statement as migration 0008's function, with one more parameter, p_data_from_body: where
-- it is true, `data` is `(raw_body::jsonb) -> 'data'`, and p_data is not read. The store sets it
-- only for an event whose `data` is `JSON.parse(raw_body).data` (the core's `dataFromRawBody`) and
-- whose body jsonb can hold whole: no `\u0000` or surrogate escape and no number beyond `numeric`'s
-- range (those keep the earlier path: the data as JSON text from the server, or null). Numbers are
-- then kept as the partner wrote them (`1.10`, `12345678901234567891`), where the server's JSON
-- text had passed them through a double.
--
-- Additive: a release of schema 9 calls migration 0008's function (eleven parameters), which stays.
-- compatible_from: 9

create function partner_yield_append_events(
  p_partner_id text[], p_environment text[], p_idempotency_key text[], p_fingerprint text[],
  p_event_type text[], p_occurred_at text[], p_data text[], p_data_from_body boolean[],
  p_raw_body text[], p_received_at timestamptz[], p_key_hash text[], p_secret_sha256 text[])
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
      p_event_type, p_occurred_at, p_data, p_data_from_body, p_raw_body, p_received_at, p_key_hash,
      p_secret_sha256) with ordinality
      as input(partner_id, environment, idempotency_key, fingerprint, event_type, occurred_at,
        data, data_from_body, raw_body, received_at, key_hash, secret_sha256, n)
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
      checked.event_type, checked.occurred_at,
      case when checked.data_from_body then checked.raw_body::jsonb -> 'data'
        else checked.data::jsonb end,
      checked.raw_body, checked.received_at
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
