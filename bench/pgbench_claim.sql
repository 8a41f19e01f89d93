-- The gateway's claim of a task nobody holds (gateway/store/authority_store.cpp
-- AuthorityStore::claim), statement for statement: the task snapshot, then publish_grant.
-- Same conventions as pgbench_admission.sql; every transaction claims a fresh task
-- with a random name, as gateway-load's claim mode does.
\set t random(1, 1000000000000000)
BEGIN;
SELECT a.realm, GREATEST(a.clock_floor_ms, 0::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS now_ms,
       t.owner, t.epoch, t.secret_hash, t.expires_at_ms, l.version, l.open_op,
       o.fingerprint, o.state, o.attempts, o.upstream_key, o.committed_version,
       o.response_status, o.response_headers::text, o.response_body,
       encode(o.response_sha256, 'hex') AS response_sha256, o.response_length,
       o.method, o.provider, o.target, o.expected_version
FROM authority a
LEFT JOIN tasks t ON t.tenant = 'tenant-a' AND t.task = md5(:t::text)
LEFT JOIN task_ledger l ON l.tenant = 'tenant-a' AND l.task = md5(:t::text)
LEFT JOIN operations o ON o.tenant = 'tenant-a' AND o.task = md5(:t::text) AND o.op_id = NULL \gset
\set expires :now_ms + 3600000
WITH e AS (SELECT nextval('epoch_seq') AS epoch),
     t AS (INSERT INTO tasks (tenant, task, owner, epoch, secret_hash, expires_at_ms, granted_at_ms)
           SELECT 'tenant-a', md5(:t::text), 'pgbench', e.epoch, sha256(('s' || :t)::bytea), :expires, :now_ms FROM e
           ON CONFLICT (tenant, task) DO UPDATE
             SET owner = excluded.owner, epoch = excluded.epoch, secret_hash = excluded.secret_hash,
                 expires_at_ms = excluded.expires_at_ms, granted_at_ms = excluded.granted_at_ms
             WHERE tasks.epoch < excluded.epoch
           RETURNING epoch),
     l AS (INSERT INTO task_ledger (tenant, task) VALUES ('tenant-a', md5(:t::text)) ON CONFLICT DO NOTHING)
SELECT epoch FROM t;
COMMIT;
