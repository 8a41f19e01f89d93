-- The gateway's admission transaction (gateway/store/ledger_store.cpp LedgerStore::admit, a new
-- key), statement for statement: the task snapshot of store/task_snapshot.cpp, then the
-- admit_new insert. Run with PGOPTIONS='-c default_transaction_isolation=serializable' and
-- pgbench -M extended (libpqxx's exec_params: one Parse/Bind/Execute per statement; libpqxx's
-- "BEGIN; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE" is one round trip, as BEGIN is here).
-- Client N works on task md5(:prefix || N) (bench/pgbench_tasks.sql; pgbench -D prefix=...),
-- with a random operation key per transaction, as each gateway-load thread on its own task.
-- The snapshot's columns are read into variables (\gset) the way the gateway reads them; only
-- the clock column is renamed, so that it can be one. The gateway's clock high-water mark ($4)
-- is 0 here: GREATEST still evaluates the same expression.
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
