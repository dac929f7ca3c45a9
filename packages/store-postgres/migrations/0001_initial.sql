-- partner-yield schema 1: partners, API keys, signing secrets, products with their latest metrics,
-- vault states and holdings, USD prices, and the event log with its idempotency key.
-- Amounts are numeric in base units (never float); rates and prices numeric with 18 decimals.

create function partner_yield_touch() returns trigger language plpgsql as $$
begin
  new.updated_at := now();
  return new;
end $$;

create table partners (
  id text primary key check (id ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  name text not null check (name <> ''),
  -- Only a verified partner may hold production keys (key lifecycle).
  verified boolean not null default false,
  -- Requests per rolling minute (CONTRACT §7); null: the server's default for the environment.
  rate_limit_sandbox integer check (rate_limit_sandbox > 0),
  rate_limit_production integer check (rate_limit_production > 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create trigger partners_touch before update on partners for each row execute function partner_yield_touch();

-- CONTRACT §4: keys are stored as SHA-256 hashes only. The display prefix and last four characters
-- let a partner manager tell keys apart without the key (unknown for an imported hash).
create table api_keys (
  id bigint generated always as identity primary key,
  partner_id text not null references partners (id),
  environment text not null check (environment in ('sandbox', 'production')),
  key_hash text not null unique check (key_hash ~ '^[0-9a-f]{64}$'),
  display_prefix text,
  last_four text check (length(last_four) = 4),
  status text not null default 'active' check (status in ('active', 'revoked')),
  label text,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  check ((status = 'revoked') = (revoked_at is not null))
);
create index api_keys_partner on api_keys (partner_id);

-- CONTRACT §4: the HMAC key is the whole secret string, so the secret itself is stored.
-- Several active secrets at once allow rotation without downtime.
create table signing_secrets (
  id bigint generated always as identity primary key,
  partner_id text not null references partners (id),
  secret text not null check (secret ~ '^whsec_[A-Za-z0-9_-]{32}$'),
  status text not null default 'active' check (status in ('active', 'revoked')),
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  unique (partner_id, secret),
  check ((status = 'revoked') = (revoked_at is not null))
);

-- CONTRACT §8. The latest metrics live on the product row, so that one UPDATE changes a product's
-- status or metrics and the next request serves them.
create table products (
  partner_id text not null references partners (id),
  slug text collate "C" not null check (slug ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
  chain text not null check (chain <> ''),
  chain_id integer not null check (chain_id > 0),
  wrapper_address text not null check (wrapper_address ~ '^0x[0-9a-fA-F]{40}$'),
  underlying_vault_address text not null check (underlying_vault_address ~ '^0x[0-9a-fA-F]{40}$'),
  asset_address text not null check (asset_address ~ '^0x[0-9a-fA-F]{40}$'),
  asset_symbol text not null check (asset_symbol <> ''),
  asset_decimals smallint not null check (asset_decimals between 0 and 36),
  decimals_offset smallint not null check (decimals_offset between 0 and 36),
  status text not null check (status in ('active', 'paused', 'deprecated')),
  service_fee_bps integer not null check (service_fee_bps between 0 and 10000),
  partner_fee_bps integer not null check (partner_fee_bps between 0 and 10000),
  display_name text not null check (display_name <> ''),
  description text not null,
  -- Latest metrics: all three, or none (latest_metrics: null).
  metrics_as_of_date date,
  wrapper_total_assets numeric(78, 0) check (wrapper_total_assets >= 0),
  -- A fraction (0.0523 is 5.23 %); above -1 so the monthly 12th root exists (CONTRACT §2).
  underlying_apy numeric(40, 18) check (underlying_apy > -1),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (partner_id, slug),
  check (service_fee_bps + partner_fee_bps <= 10000),
  check ((metrics_as_of_date is null) = (wrapper_total_assets is null)
     and (metrics_as_of_date is null) = (underlying_apy is null))
);
create trigger products_touch before update on products for each row execute function partner_yield_touch();

-- CONTRACT §8: deprecated is terminal.
create function partner_yield_product_status() returns trigger language plpgsql as $$
begin
  if old.status = 'deprecated' and new.status <> 'deprecated' then
    raise exception 'product %/% is deprecated; deprecated is terminal', old.partner_id, old.slug
      using errcode = 'check_violation';
  end if;
  return new;
end $$;
create trigger products_status before update of status on products
  for each row execute function partner_yield_product_status();

-- ERC-4626 wrapper states, addresses in lower case.
create table vaults (
  chain_id integer not null check (chain_id > 0),
  wrapper_address text not null check (wrapper_address ~ '^0x[0-9a-f]{40}$'),
  total_assets numeric(78, 0) not null check (total_assets >= 0),
  total_supply numeric(78, 0) not null check (total_supply >= 0),
  updated_at timestamptz not null default now(),
  primary key (chain_id, wrapper_address)
);
create trigger vaults_touch before update on vaults for each row execute function partner_yield_touch();

create table vault_holdings (
  chain_id integer not null,
  wrapper_address text not null,
  wallet_address text not null check (wallet_address ~ '^0x[0-9a-f]{40}$'),
  shares numeric(78, 0) not null check (shares >= 0),
  updated_at timestamptz not null default now(),
  primary key (chain_id, wrapper_address, wallet_address),
  foreign key (chain_id, wrapper_address) references vaults on delete cascade
);
create trigger vault_holdings_touch before update on vault_holdings
  for each row execute function partner_yield_touch();

-- USD per whole unit of an asset.
create table asset_prices (
  chain_id integer not null check (chain_id > 0),
  asset_address text not null check (asset_address ~ '^0x[0-9a-f]{40}$'),
  usd_price numeric(60, 18) not null check (usd_price >= 0),
  updated_at timestamptz not null default now(),
  primary key (chain_id, asset_address)
);
create trigger asset_prices_touch before update on asset_prices
  for each row execute function partner_yield_touch();

-- CONTRACT §5. One row per accepted event; the unique key is the idempotency record.
-- No foreign key to partners: the log outlives any change to partners.
create table events (
  id bigint generated always as identity primary key,
  partner_id text not null,
  environment text not null check (environment in ('sandbox', 'production')),
  idempotency_key text not null,
  fingerprint text not null check (fingerprint ~ '^[0-9a-f]{64}$'),
  event_type text not null,
  -- As sent (RFC 3339): a leap second (:60) is valid there and no timestamptz can hold it.
  occurred_at text not null,
  -- The event's data for queries; null only when it holds what jsonb cannot (a \u0000 escape or a
  -- lone surrogate): raw_body, the exact signed text, always holds it.
  data jsonb,
  raw_body text not null,
  received_at timestamptz not null,
  unique (partner_id, environment, idempotency_key)
);
