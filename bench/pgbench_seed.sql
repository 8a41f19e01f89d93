-- The gateway's history (bench/run.sh runs it once, right after the run's first measurement,
-- which is on a fresh database, so it touches only the rows it inserts): :tasks finished tasks
-- of tenant-a with :ops committed operations each. Under SERIALIZABLE, PostgreSQL locks B-tree
-- reads by leaf page: on empty tables every transaction's keys share a few pages and conflict,
-- which measures the first seconds of a new database rather than a running one.
-- The history is recent (stamped now): older than retention.operations_days (30 days), the
-- gateway's retention job would spend the first measurements deleting it.
-- psql -v tasks=N -v ops=M -f bench/pgbench_seed.sql
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms \gset
INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)
SELECT 'tenant-a', md5('seed-' || g), 'seed', nextval('epoch_seq'), sha256('seed'::bytea), :now_ms, :now_ms
FROM generate_series(1, :tasks) AS g;

INSERT INTO task_ledger (tenant, task, version)
SELECT 'tenant-a', md5('seed-' || g), :ops FROM generate_series(1, :tasks) AS g;

-- Each operation's one attempt is kept in its row (schema/013).
INSERT INTO operations (tenant, task, op_id, fingerprint, method, provider, target, expected_version,
                        upstream_key, state, attempts, created_ms, updated_ms, committed_version,
                        response_status, response_headers, response_body, response_sha256, response_length,
                        attempt_realm, attempt_owner, attempt_epoch, attempt_admitted_ms, attempt_outcome,
                        attempt_outcome_ms, attempt_upstream_status, attempt_detail)
SELECT 'tenant-a', t.task, md5('op-' || g || '-' || v), sha256(('op-' || g || '-' || v)::bytea),
       'POST', 'booking', '/bookings', v - 1, 'gw1-seed-' || g || '-' || v, 'succeeded', 1, :now_ms, :now_ms, v,
       201, '[["Content-Type","application/json"]]'::jsonb, convert_to(repeat('b', 90), 'UTF8'),
       sha256(convert_to(repeat('b', 90), 'UTF8')), 90,
       a.realm, 'seed', t.epoch, :now_ms, 'succeeded', :now_ms, 201, 'provider replied 201'
FROM generate_series(1, :tasks) AS g
JOIN tasks t ON t.tenant = 'tenant-a' AND t.task = md5('seed-' || g)
CROSS JOIN authority a, generate_series(1, :ops) AS v;

ANALYZE;
