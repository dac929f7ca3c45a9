-- partner-yield schema 7: the event log in commit-safe order, named consumers with a checkpoint,
-- and a wake-up on commit (event-consumer.ts; README "Processing events").
--
-- Ids are taken from a sequence when a row is inserted, not when it commits: a transaction holding
-- id 7 may commit after one holding id 8, so a reader paging by id can pass 7 before it is
-- visible. Each row therefore records the id of the transaction that inserted it (xid, a 64-bit
-- xid8 that never wraps), and the log is read in (xid, id) order, only below the reading snapshot's
-- xmin (pg_snapshot_xmin(pg_current_snapshot())): every transaction below it has ended, so the set
-- of rows below it is final, and every transaction that may still insert has an xid at or above
-- it. A consumer's checkpoint is a position (xid, id) in that order.
--
-- Rows from before this migration record xid 0 (a constant default: no table rewrite); they sort
-- first, in id order, as the committed past. New rows get pg_current_xact_id().
--
-- Additive: a release of schema 6 neither reads nor writes the new column (its inserts get the
-- default) nor the new table; the trigger only notifies.
-- compatible_from: 6

alter table events add column xid xid8 not null default '0';
alter table events alter column xid set default pg_current_xact_id();
create index events_commit_order on events (xid, id);

-- A named consumer and its checkpoint: every event at or before (position_xid, position_id) in
-- the log's order is acknowledged. Registered on its first use; `partner-yield events prune`
-- never deletes an event a registered consumer has not acknowledged.
create table event_consumers (
  name text primary key check (name ~ '^[a-z0-9][a-z0-9_.:-]{0,127}$'),
  position_xid xid8 not null default '0',
  -- The id of the last acknowledged event; 0 before the first.
  position_id bigint not null default 0 check (position_id >= 0),
  created_at timestamptz not null default now(),
  acknowledged_at timestamptz
);

-- One notification per inserting statement on partner_yield_events, sent at commit (empty payload:
-- a consumer reads the log from its checkpoint, whatever was committed).
create function partner_yield_notify_event() returns trigger language plpgsql as $$
begin
  perform pg_notify('partner_yield_events', '');
  return null;
end $$;
create trigger events_insert_notify after insert on events
  for each statement execute function partner_yield_notify_event();
