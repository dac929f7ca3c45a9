-- partner-yield schema 6: signing secrets encrypted at rest, and the record of admin commands.
--
-- A signing secret is the HMAC key of a partner's events (CONTRACT §4), so the server needs the
-- secret itself, not a hash. From this schema on a row holds it in one of two forms:
--   - sealed: AES-256-GCM under a key of the environment (PARTNER_YIELD_SECRET_KEYS), in `sealed`
--     (12-byte nonce, ciphertext, 16-byte tag; the partner id is the associated data) with the id
--     of that key in `key_id`, and `secret` null;
--   - plain: `secret` as before (a database without a key: the sandbox, and rows written before the
--     key was set), until `partner-yield secrets rekey` seals it.
-- `secret_sha256` (hex SHA-256 of the secret) identifies a secret without it: the import's
-- "already there" check and the event log's "still active" check compare it. `last_four` is what
-- `secrets list` shows. A trigger fills both from a plain `secret`, so a plain write needs neither.
--
-- Contracting: a release of schema 5 reads only `secret`, and would ignore every sealed secret
-- (its partner's events would fail with 401 invalid_signature), so it must not run here.
-- compatible_from: 6

alter table signing_secrets
  alter column secret drop not null,
  add column secret_sha256 text check (secret_sha256 ~ '^[0-9a-f]{64}$'),
  add column last_four text check (length(last_four) = 4),
  add column key_id text check (key_id ~ '^[A-Za-z0-9_-]{1,32}$'),
  add column sealed bytea check (octet_length(sealed) = 12 + 38 + 16);

create function partner_yield_secret_digest() returns trigger language plpgsql as $$
begin
  if new.secret is not null then
    new.secret_sha256 := encode(sha256(convert_to(new.secret, 'UTF8')), 'hex');
    new.last_four := right(new.secret, 4);
  end if;
  return new;
end $$;
create trigger signing_secrets_digest before insert or update of secret on signing_secrets
  for each row execute function partner_yield_secret_digest();

update signing_secrets
  set secret_sha256 = encode(sha256(convert_to(secret, 'UTF8')), 'hex'), last_four = right(secret, 4);

alter table signing_secrets
  alter column secret_sha256 set not null,
  alter column last_four set not null,
  add constraint signing_secrets_one_form check ((secret is null) <> (sealed is null)),
  add constraint signing_secrets_sealed_key check ((sealed is null) = (key_id is null));
create unique index signing_secrets_partner_sha256 on signing_secrets (partner_id, secret_sha256);

-- Every admin command that changes (or is refused a change of) partners, keys, secrets, the fixture
-- import, the re-encryption of secrets: who ran it, when, what, on what, and the rows before and
-- after. Never a key, a signing secret or an encryption key: keys and secrets by id, prefix and
-- last four characters only. Append-only for the application.
create table admin_audit (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  actor text not null check (actor <> '' and length(actor) <= 200),
  command text not null check (command ~ '^[a-z-]+( [a-z-]+)?$'),
  target text check (length(target) <= 500),
  outcome text not null check (outcome ~ '^[a-z_]{1,64}$'),
  before jsonb,
  after jsonb
);
create index admin_audit_at on admin_audit (at, id);
