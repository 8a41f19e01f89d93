-- Naive SQL for one protected mutation: what a careful client library would run against the
-- gateway's own schema instead of the gateway (bench/run.sh, pgbench -M prepared, SERIALIZABLE
-- via PGOPTIONS). Two transactions, one statement per round trip:
--   admit:   the owner row FOR UPDATE (the grant is checked by the client), the key looked up,
--            the operation and its attempt inserted, the ledger's open operation set
--   outcome: the operation and the attempt updated, the ledger's version bumped
-- Client n (1-based) owns task trip-<run>-<n>, or <16 hex>-<run>-<n> with -D random=1
-- (bench/naive_tasks.sql), and sends keys <task>-op-1, -op-2, ... (random: <16 hex>-<k>), as
-- gateway-load's agents do: operation k is the one after version k-1, so the key is read with
-- the owner row. The realm is the client's cached copy (-D realm=...).
-- pgbench -D run=ID -D random=0|1 -D realm=R --max-tries=8 ...
-- pgbench retries a failed script from its start: a failure in the outcome transaction re-runs
-- the (committed) admission, which finds the same key (the version did not move) and inserts
-- nothing twice, as a client library's retry of the same operation would.
\set n :client_id + 1
BEGIN;
SELECT t.task, t.owner, t.epoch, l.version,
       CASE WHEN :random = 1 THEN substr(md5(t.task || '-' || (l.version + 1)), 1, 16) || '-' ELSE t.task || '-op-' END
       || (l.version + 1) AS key
FROM tasks t JOIN task_ledger l ON l.tenant = t.tenant AND l.task = t.task
WHERE t.tenant = 'tenant-a'
  AND t.task = CASE WHEN :random = 1 THEN substr(md5(:run::text || '-' || :n::text), 1, 16) || '-' ELSE 'trip-' END
               || :run::text || '-' || :n::text
FOR UPDATE OF t \gset
SELECT state, fingerprint FROM operations WHERE tenant = 'tenant-a' AND task = :task AND op_id = :key;
INSERT INTO operations (tenant, task, op_id, fingerprint, method, provider, target, expected_version,
                        upstream_key, state, attempts, created_ms, updated_ms)
VALUES ('tenant-a', :task, :key, sha256(convert_to(:key::text, 'UTF8')), 'POST', 'booking', '/bookings', :version,
        'naive-' || :key::text, 'in_flight', 1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
        (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
ON CONFLICT DO NOTHING;
INSERT INTO operation_attempts (tenant, task, op_id, attempt, realm, owner, epoch, admitted_ms)
VALUES ('tenant-a', :task, :key, 1, :realm, :owner, :epoch, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
ON CONFLICT DO NOTHING;
UPDATE task_ledger SET open_op = :key WHERE tenant = 'tenant-a' AND task = :task;
COMMIT;
BEGIN;
UPDATE operations
SET state = 'succeeded', updated_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
    committed_version = :version + 1, response_status = 201,
    response_headers = '[["Content-Type","application/json"]]'::jsonb,
    response_body = convert_to(repeat('b', 90), 'UTF8'), response_sha256 = sha256(convert_to(repeat('b', 90), 'UTF8')),
    response_length = 90
WHERE tenant = 'tenant-a' AND task = :task AND op_id = :key;
UPDATE operation_attempts
SET outcome = 'succeeded', outcome_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
    upstream_status = 201, detail = 'provider replied 201'
WHERE tenant = 'tenant-a' AND task = :task AND op_id = :key AND attempt = 1;
UPDATE task_ledger SET version = version + 1, open_op = NULL WHERE tenant = 'tenant-a' AND task = :task;
COMMIT;
