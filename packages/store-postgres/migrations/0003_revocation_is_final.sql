-- partner-yield schema 2: revoking an API key or a signing secret is final (docs/contract.md, "Keys
-- and secrets"). A revoked credential may have leaked; bringing it back would trust it again, so
-- the database refuses any UPDATE that leaves 'revoked' or moves revoked_at. A new key or secret
-- is the way back.

create function partner_yield_revocation_is_final() returns trigger language plpgsql as $$
begin
  if old.status = 'revoked' and (new.status <> 'revoked' or new.revoked_at is distinct from old.revoked_at) then
    raise exception '% % is revoked; revocation is final (issue a new one instead)', tg_table_name, old.id
      using errcode = 'check_violation';
  end if;
  return new;
end $$;

create trigger api_keys_revocation_is_final before update on api_keys
  for each row execute function partner_yield_revocation_is_final();
create trigger signing_secrets_revocation_is_final before update on signing_secrets
  for each row execute function partner_yield_revocation_is_final();
