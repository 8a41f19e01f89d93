-- The tasks one pgbench measurement works on (bench/run.sh runs it before each, unmeasured):
-- client N of measurement :prefix owns task md5(:prefix || N), fresh, with a lease that outlasts
-- the run, as each gateway-load thread claims a fresh task with a random name.
-- psql -v prefix=A1 -v clients=16 -f bench/pgbench_tasks.sql
INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)
SELECT 'tenant-a', md5(:'prefix' || g), 'pgbench', nextval('epoch_seq'), sha256('pgbench'::bytea),
       (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 86400000, 0
FROM generate_series(0, :clients - 1) AS g;
INSERT INTO task_ledger (tenant, task) SELECT 'tenant-a', md5(:'prefix' || g) FROM generate_series(0, :clients - 1) AS g;
