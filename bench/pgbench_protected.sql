-- The database work of one protected request: the gateway's admission transaction, then its
-- outcome transaction (gateway/store/ledger_store.cpp LedgerStore::admit and record_outcome, a
-- committed 201), statement for statement. Same conventions as pgbench_admission.sql.
-- The outcome needs the operation its admission just recorded, so both transactions are one
-- script. pgbench retries a failed script from its start with the same variables, which would
-- re-insert the same key: run this one with --max-tries=1 and read serialization failures as
-- failed requests.
\set op random(1, 1000000000000000)
BEGIN;
SELECT a.realm, GREATEST(a.clock_floor_ms, 0::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS now_ms,
       t.owner, t.epoch, t.secret_hash, t.expires_at_ms, l.version, l.open_op,
       o.fingerprint, o.state, o.attempts, o.upstream_key, o.committed_version,
       o.response_status, o.response_headers::text, o.response_body,
       encode(o.response_sha256, 'hex') AS response_sha256, o.response_length,
       o.method, o.provider, o.target, o.expected_version
FROM authority a
LEFT JOIN tasks t ON t.tenant = 'tenant-a' AND t.task = md5(:prefix::text || :client_id)
LEFT JOIN task_ledger l ON l.tenant = 'tenant-a' AND l.task = md5(:prefix::text || :client_id)
LEFT JOIN operations o ON o.tenant = 'tenant-a' AND o.task = md5(:prefix::text || :client_id) AND o.op_id = 'op-' || :op \gset
WITH op AS (INSERT INTO operations (tenant, task, op_id, fingerprint, method, provider, target,
                                    expected_version, upstream_key, state, attempts, created_ms, updated_ms)
            VALUES ('tenant-a', md5(:prefix::text || :client_id), 'op-' || :op, sha256(('op-' || :op)::bytea), 'POST', 'booking', '/bookings',
                    :version, 'gw1-pgbench-' || :op, 'in_flight', 1, :now_ms, :now_ms)),
     at AS (INSERT INTO operation_attempts (tenant, task, op_id, attempt, realm, owner, epoch, admitted_ms)
            VALUES ('tenant-a', md5(:prefix::text || :client_id), 'op-' || :op, 1, :realm, :owner, :epoch, :now_ms))
UPDATE task_ledger SET open_op = 'op-' || :op WHERE tenant = 'tenant-a' AND task = md5(:prefix::text || :client_id);
COMMIT;
-- The outcome: a fresh snapshot with the operation (its state is checked there), then the
-- record, every row by primary key.
BEGIN;
SELECT a.realm, GREATEST(a.clock_floor_ms, 0::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS now_ms,
       t.owner, t.epoch, t.secret_hash, t.expires_at_ms, l.version, l.open_op,
       o.fingerprint, o.state, o.attempts, o.upstream_key, o.committed_version,
       o.response_status, o.response_headers::text, o.response_body,
       encode(o.response_sha256, 'hex') AS response_sha256, o.response_length,
       o.method, o.provider, o.target, o.expected_version
FROM authority a
LEFT JOIN tasks t ON t.tenant = 'tenant-a' AND t.task = md5(:prefix::text || :client_id)
LEFT JOIN task_ledger l ON l.tenant = 'tenant-a' AND l.task = md5(:prefix::text || :client_id)
LEFT JOIN operations o ON o.tenant = 'tenant-a' AND o.task = md5(:prefix::text || :client_id) AND o.op_id = 'op-' || :op \gset
\set next :version + 1
WITH o AS (UPDATE operations
           SET state = 'succeeded', updated_ms = :now_ms, committed_version = :next, response_status = 201,
               response_headers = '[["Content-Type","application/json"]]'::jsonb,
               response_body = convert_to(repeat('b', 90), 'UTF8'), response_sha256 = sha256(convert_to(repeat('b', 90), 'UTF8')),
               response_length = 90
           WHERE tenant = 'tenant-a' AND task = md5(:prefix::text || :client_id) AND op_id = 'op-' || :op),
     a AS (UPDATE operation_attempts SET outcome = 'succeeded', outcome_ms = :now_ms, upstream_status = 201, detail = 'provider replied 201'
           WHERE tenant = 'tenant-a' AND task = md5(:prefix::text || :client_id) AND op_id = 'op-' || :op AND attempt = 1)
UPDATE task_ledger SET version = :next, open_op = NULL
WHERE tenant = 'tenant-a' AND task = md5(:prefix::text || :client_id)
RETURNING version;
COMMIT;
