-- The minimal baseline's history (bench/run.sh runs it after the fresh measurement, beside
-- bench/pgbench_seed.sql for the gateway): :ops succeeded operations for each of the :tasks
-- owners of bench/minimal_schema.sql, their versions moved on to match. Under SERIALIZABLE,
-- PostgreSQL locks B-tree reads by leaf page: on an empty operations table every
-- transaction's key lookup and insert share a few pages and conflict.
-- psql -v tasks=N -v ops=M -f bench/minimal_seed.sql
INSERT INTO minimal.operations (tenant, task, op_id, payload_hash, state, epoch)
SELECT o.tenant, o.task, 'seed-' || g || '-' || v, sha256(convert_to('seed-' || g || '-' || v, 'UTF8')),
       'succeeded', o.epoch
FROM generate_series(1, :tasks) AS g
JOIN minimal.owners o ON o.tenant = 'tenant-a' AND o.task = 'task-' || g
CROSS JOIN generate_series(1, :ops) AS v;
UPDATE minimal.owners SET version = version + :ops WHERE task LIKE 'task-%';
