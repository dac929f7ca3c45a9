-- partner-yield schema 9: the event log's fingerprint check in a form PostgreSQL evaluates for a
-- small part of the cost (docs/performance.md, "The POST's statement").
--
-- The rule is unchanged: 64 lowercase hexadecimal digits (CONTRACT §5's fingerprint, a SHA-256).
-- Written as `fingerprint ~ '^[0-9a-f]{64}$'`, the bound {64} makes an automaton of 64 states
-- that PostgreSQL's regex engine walks anew at each row, one of the larger costs of an event's
-- insert. `octet_length(fingerprint) = 64` with `'^[0-9a-f]*$'` accepts exactly the same strings
-- (each allowed character is one byte, so 64 bytes of them are 64 characters) through an
-- automaton of one state.
--
-- NOT VALID: the old check, the same rule, held for every row already there, and validating would
-- read the whole event log while this transaction holds the table's ACCESS EXCLUSIVE lock (every
-- insert waiting meanwhile). New rows are checked either way. `alter table events validate
-- constraint events_fingerprint_check` marks it validated later without stopping inserts (it takes
-- SHARE UPDATE EXCLUSIVE), should an operator want the catalog to say so.
--
-- Additive: every release that runs on schema 8 stores rows the new check accepts, since the rule
-- is the same.
-- compatible_from: 8

alter table events
  drop constraint events_fingerprint_check,
  add constraint events_fingerprint_check
    check (octet_length(fingerprint) = 64 and fingerprint ~ '^[0-9a-f]*$') not valid;
