-- The minimal baseline's own tables (bench/run.sh runs this once, before the first
-- measurement): what a careful engineer would write for "one owner per task, every operation
-- recorded once" without the gateway. Its own schema in the same PostgreSQL cluster, so that
-- both sides share the machine, the WAL and its fsyncs; primary keys only, no other index.
-- :tasks owner rows, leases that outlast the run: the tasks the protected mutations pick
-- from (a client library claims them as gateway-load's agents claim theirs before the clock
-- starts). The history comes later (bench/minimal_seed.sql): the first measurement of a run
-- is on a fresh database.
-- psql -v tasks=N -f bench/minimal_schema.sql
CREATE SCHEMA minimal;
CREATE SEQUENCE minimal.epoch_seq AS bigint;
CREATE TABLE minimal.owners (
  tenant     text NOT NULL,
  task       text NOT NULL,
  owner      text NOT NULL,
  epoch      bigint NOT NULL,
  expires_at timestamptz NOT NULL,
  version    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, task)
);
CREATE TABLE minimal.operations (
  tenant       text NOT NULL,
  task         text NOT NULL,
  op_id        text NOT NULL,
  payload_hash bytea NOT NULL,
  state        text NOT NULL,
  epoch        bigint NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, task, op_id)
);
INSERT INTO minimal.owners (tenant, task, owner, epoch, expires_at)
SELECT 'tenant-a', 'task-' || g, 'minimal', nextval('minimal.epoch_seq'), now() + interval '1 day'
FROM generate_series(1, :tasks) AS g;
ANALYZE minimal.owners;
