-- partner-yield schema 4: every change to a table the API reads on each request is announced on
-- the channel partner_yield_changes, so each server's read cache (read-cache.ts) drops what
-- changed within milliseconds of the commit, whoever made it: the CLI, another instance, the
-- import, or an UPDATE typed in psql.
--
-- One notification per statement (AFTER … FOR EACH STATEMENT, with its transition tables), sent
-- at commit, and only when a column the API serves changed (an UPDATE that only stamps
-- last_used_at or updated_at announces nothing):
--   {"table": "api_keys", "keys": [["<key_hash>"], …]}   the rows' keys, old and new
--   {"table": "api_keys"}                                  the whole table (a TRUNCATE, a statement
--                                                          of more than 100 rows, or keys that would
--                                                          not fit in NOTIFY's 8000 bytes)
-- The key columns and the columns not served are the trigger's two arguments.

create function partner_yield_changed_keys(rows jsonb, key_columns text[]) returns jsonb
language sql immutable as $$
  select coalesce(jsonb_agg(distinct k), '[]'::jsonb)
  from (
    select (select jsonb_agg(r ->> c order by n) from unnest(key_columns) with ordinality u(c, n)) as k
    from jsonb_array_elements(rows) r
  ) keys
$$;

create function partner_yield_notify_change() returns trigger language plpgsql as $$
declare
  key_columns text[] := string_to_array(tg_argv[0], ',');
  unserved text[] := string_to_array(coalesce(tg_argv[1], ''), ',');
  changed jsonb;
  payload text;
  whole text := json_build_object('table', tg_table_name)::text;
begin
  if tg_op = 'TRUNCATE' then
    perform pg_notify('partner_yield_changes', whole);
    return null;
  end if;
  -- A bulk statement names the whole table: its keys would not fit, and comparing every row
  -- would cost more than the statement itself.
  if tg_op = 'DELETE' then
    if (select count(*) from changed_old) > 100 then
      perform pg_notify('partner_yield_changes', whole);
      return null;
    end if;
  elsif (select count(*) from changed_new) > 100 then
    perform pg_notify('partner_yield_changes', whole);
    return null;
  end if;
  if tg_op = 'INSERT' then
    select coalesce(jsonb_agg(to_jsonb(n)), '[]'::jsonb) into changed from changed_new n;
  elsif tg_op = 'DELETE' then
    select coalesce(jsonb_agg(to_jsonb(o)), '[]'::jsonb) into changed from changed_old o;
  else
    -- The rows whose served columns differ, in their old and their new form (a key may change).
    select coalesce(jsonb_agg(r), '[]'::jsonb) into changed from (
      (select to_jsonb(n) - unserved as r from changed_new n
       except all select to_jsonb(o) - unserved from changed_old o)
      union all
      (select to_jsonb(o) - unserved from changed_old o
       except all select to_jsonb(n) - unserved from changed_new n)
    ) differing;
  end if;
  if jsonb_array_length(changed) = 0 then
    return null;
  end if;
  payload := json_build_object('table', tg_table_name,
    'keys', partner_yield_changed_keys(changed, key_columns))::text;
  if octet_length(payload) > 7900 then
    payload := whole;
  end if;
  perform pg_notify('partner_yield_changes', payload);
  return null;
end $$;

-- Per table: the key the cache files a row under, and the columns it never serves.
create trigger api_keys_insert_notify after insert on api_keys referencing new table as changed_new
  for each statement execute function partner_yield_notify_change('key_hash', 'last_used_at');
create trigger api_keys_update_notify after update on api_keys
  referencing old table as changed_old new table as changed_new
  for each statement execute function partner_yield_notify_change('key_hash', 'last_used_at');
create trigger api_keys_delete_notify after delete on api_keys referencing old table as changed_old
  for each statement execute function partner_yield_notify_change('key_hash', 'last_used_at');
create trigger api_keys_truncate_notify after truncate on api_keys
  for each statement execute function partner_yield_notify_change('key_hash');

create trigger partners_insert_notify after insert on partners referencing new table as changed_new
  for each statement execute function partner_yield_notify_change('id', 'updated_at');
create trigger partners_update_notify after update on partners
  referencing old table as changed_old new table as changed_new
  for each statement execute function partner_yield_notify_change('id', 'updated_at');
create trigger partners_delete_notify after delete on partners referencing old table as changed_old
  for each statement execute function partner_yield_notify_change('id', 'updated_at');
create trigger partners_truncate_notify after truncate on partners
  for each statement execute function partner_yield_notify_change('id');

-- A partner's active secrets are part of its partner record: the key is the partner.
create trigger signing_secrets_insert_notify after insert on signing_secrets
  referencing new table as changed_new
  for each statement execute function partner_yield_notify_change('partner_id');
create trigger signing_secrets_update_notify after update on signing_secrets
  referencing old table as changed_old new table as changed_new
  for each statement execute function partner_yield_notify_change('partner_id');
create trigger signing_secrets_delete_notify after delete on signing_secrets
  referencing old table as changed_old
  for each statement execute function partner_yield_notify_change('partner_id');
create trigger signing_secrets_truncate_notify after truncate on signing_secrets
  for each statement execute function partner_yield_notify_change('partner_id');

-- A product and its latest metrics are one row.
create trigger products_insert_notify after insert on products referencing new table as changed_new
  for each statement execute function partner_yield_notify_change('partner_id,slug', 'updated_at');
create trigger products_update_notify after update on products
  referencing old table as changed_old new table as changed_new
  for each statement execute function partner_yield_notify_change('partner_id,slug', 'updated_at');
create trigger products_delete_notify after delete on products referencing old table as changed_old
  for each statement execute function partner_yield_notify_change('partner_id,slug', 'updated_at');
create trigger products_truncate_notify after truncate on products
  for each statement execute function partner_yield_notify_change('partner_id,slug');

create trigger vaults_insert_notify after insert on vaults referencing new table as changed_new
  for each statement execute function partner_yield_notify_change('chain_id,wrapper_address', 'updated_at');
create trigger vaults_update_notify after update on vaults
  referencing old table as changed_old new table as changed_new
  for each statement execute function partner_yield_notify_change('chain_id,wrapper_address', 'updated_at');
create trigger vaults_delete_notify after delete on vaults referencing old table as changed_old
  for each statement execute function partner_yield_notify_change('chain_id,wrapper_address', 'updated_at');
create trigger vaults_truncate_notify after truncate on vaults
  for each statement execute function partner_yield_notify_change('chain_id,wrapper_address');

create trigger vault_holdings_insert_notify after insert on vault_holdings
  referencing new table as changed_new
  for each statement execute function
    partner_yield_notify_change('chain_id,wrapper_address,wallet_address', 'updated_at');
create trigger vault_holdings_update_notify after update on vault_holdings
  referencing old table as changed_old new table as changed_new
  for each statement execute function
    partner_yield_notify_change('chain_id,wrapper_address,wallet_address', 'updated_at');
create trigger vault_holdings_delete_notify after delete on vault_holdings
  referencing old table as changed_old
  for each statement execute function
    partner_yield_notify_change('chain_id,wrapper_address,wallet_address', 'updated_at');
create trigger vault_holdings_truncate_notify after truncate on vault_holdings
  for each statement execute function partner_yield_notify_change('chain_id,wrapper_address,wallet_address');

-- updated_at of a price is served (its age), so every column counts.
create trigger asset_prices_insert_notify after insert on asset_prices referencing new table as changed_new
  for each statement execute function partner_yield_notify_change('chain_id,asset_address');
create trigger asset_prices_update_notify after update on asset_prices
  referencing old table as changed_old new table as changed_new
  for each statement execute function partner_yield_notify_change('chain_id,asset_address');
create trigger asset_prices_delete_notify after delete on asset_prices
  referencing old table as changed_old
  for each statement execute function partner_yield_notify_change('chain_id,asset_address');
create trigger asset_prices_truncate_notify after truncate on asset_prices
  for each statement execute function partner_yield_notify_change('chain_id,asset_address');
