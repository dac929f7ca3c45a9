-- partner-yield schema 2: a price's updated_at is when the price was observed, which a feed may
-- know better than the clock of the write (an oracle's round, an exchange's timestamp), and which
-- the server ages (a price older than --price-max-age is refused with 503, never served).
-- An UPDATE that sets updated_at to a new value keeps it (a feed's time, or an operator dating a
-- price back); one that changes the price and leaves updated_at alone is stamped now(), as before;
-- one that writes the same price and time again changes nothing, so a feed re-sending an old
-- observation cannot make it look fresh.

create function partner_yield_price_touch() returns trigger language plpgsql as $$
begin
  if new.updated_at is not distinct from old.updated_at
     and new.usd_price is distinct from old.usd_price then
    new.updated_at := now();
  end if;
  return new;
end $$;

drop trigger asset_prices_touch on asset_prices;
create trigger asset_prices_touch before update on asset_prices
  for each row execute function partner_yield_price_touch();
