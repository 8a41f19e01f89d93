-- The tasks one naive protected-mutation measurement works on (bench/run.sh runs it before
-- each, unmeasured, as gateway-load's agents claim theirs before the clock starts): client
-- n = 1..:clients owns task trip-<run>-<n> (:random = 0) or <16 hex>-<run>-<n> (:random = 1),
-- the names gateway-load gives its agents' tasks, with a lease that outlasts the run.
-- psql -v run=ID -v random=0 -v clients=64 -f bench/naive_tasks.sql
CREATE TEMP TABLE bench_names AS
SELECT CASE WHEN :random = 1 THEN substr(md5(:'run' || '-' || g), 1, 16) || '-' ELSE 'trip-' END
       || :'run' || '-' || g AS task
FROM generate_series(1, :clients) AS g;
INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)
SELECT 'tenant-a', task, 'naive', nextval('epoch_seq'), sha256('naive'::bytea),
       (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 86400000, 0
FROM bench_names;
INSERT INTO task_ledger (tenant, task) SELECT 'tenant-a', task FROM bench_names;
