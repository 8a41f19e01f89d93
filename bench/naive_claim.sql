-- Naive SQL for one claim of a fresh task: what a careful client library would run against the
-- gateway's own schema instead of the gateway (bench/run.sh, pgbench -M prepared, SERIALIZABLE
-- via PGOPTIONS). One transaction: the owner row FOR UPDATE (a fresh task has none), then the
-- upsert that takes a new epoch from the sequence and publishes the ledger row.
-- Task names as gateway-load's claim mode: trip-<run>-<m>, or <16 hex>-<run>-<m> with
-- -D random=1, m = 1, 2, ... over all clients (client c's k-th claim is m = (k-1)*clients+c+1).
-- pgbench -D run=ID -D random=0|1 -D k=0 -D clients=C --max-tries=8 ...
\set m :k * :clients + :client_id + 1
\set k :k + 1
BEGIN;
SELECT owner, epoch, expires_at_ms FROM tasks
WHERE tenant = 'tenant-a'
  AND task = CASE WHEN :random = 1 THEN substr(md5(:run::text || '-' || :m::text), 1, 16) || '-' ELSE 'trip-' END
             || :run::text || '-' || :m::text
FOR UPDATE;
WITH t AS (INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)
           VALUES ('tenant-a',
                   CASE WHEN :random = 1 THEN substr(md5(:run::text || '-' || :m::text), 1, 16) || '-' ELSE 'trip-' END
                   || :run::text || '-' || :m::text,
                   'naive-' || :client_id::text, nextval('epoch_seq'), sha256(convert_to('s' || :m::text, 'UTF8')),
                   (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 3600000,
                   (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
           ON CONFLICT (tenant, task) DO UPDATE
             SET owner = excluded.owner, epoch = excluded.epoch, secret_hash = excluded.secret_hash,
                 expires_at_ms = excluded.expires_at_ms, granted_at_ms = excluded.granted_at_ms
             WHERE tasks.expires_at_ms <= excluded.granted_at_ms
           RETURNING epoch),
     l AS (INSERT INTO task_ledger (tenant, task)
           SELECT 'tenant-a', CASE WHEN :random = 1 THEN substr(md5(:run::text || '-' || :m::text), 1, 16) || '-' ELSE 'trip-' END
                              || :run::text || '-' || :m::text
           ON CONFLICT DO NOTHING)
SELECT epoch FROM t;
COMMIT;
