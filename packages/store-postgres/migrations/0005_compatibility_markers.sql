-- partner-yield schema 5: expand/contract. Each applied migration records compatible_from, the
-- oldest schema-code version (a release's highest migration) that can run on a schema including
-- it, so that a release older than the schema can tell, from the database alone, whether it may
-- run there: it starts when every applied migration it does not know has compatible_from <= its
-- own version (migrations.ts). An additive migration (a new table, a new nullable column, an
-- index, a trigger old code does not depend on) keeps compatible_from at the previous release's
-- version; a contracting one (a drop, a rename, a new NOT NULL, a constraint old code breaks)
-- raises it to its own version.
--
-- From this file on, each migration states its marker on a line of its own, as below. This one is
-- additive: a nullable column that releases up to 4 neither read nor write (though they, older
-- than the marker, refuse any schema newer than their own). Migrations 0001-0004 predate the
-- marker; each is recorded as additive to the release before it (version - 1).
-- compatible_from: 4

alter table schema_migrations
  add column compatible_from integer check (compatible_from between 0 and version);
update schema_migrations set compatible_from = version - 1 where compatible_from is null;
