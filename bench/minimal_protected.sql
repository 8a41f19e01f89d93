-- The minimal baseline for one protected mutation: what a careful engineer would run on
-- their own two tables (bench/minimal_schema.sql) instead of calling the gateway. bench/run.sh
-- runs it with pgbench -M prepared (one statement per round trip, parameters bound) and
-- PGOPTIONS search_path=minimal, as many clients as the gateway has agents:
--   admit (SERIALIZABLE): the owner row FOR UPDATE (the client checks owner, epoch, expiry and
--     version in its own code), the key looked up, the operation inserted as admitted
--   outcome (the default READ COMMITTED): the operation marked succeeded, the version bumped
--     under the epoch the admission read
-- It forwards nothing: the gateway also pays for the HTTP hop to the provider.
-- Each script run picks one of the :tasks owners at random and sends a new key
-- <run>-<client>-<k>. The pick is a hash of (client, k) rather than random(), and k moves on
-- only after the outcome committed: pgbench retries a failed script from its start (up to
-- --max-tries), and a retry after the admission committed must find the same operation on
-- the same task, not admit a second one, as a client library's retry of the same operation
-- would. A script that gave up is retried the same way by the client's next run.
-- pgbench's \gset needs exactly one row, hence count(*) for the key lookup; pgbench cannot
-- hash a string, hence sha256() on the server for the payload hash a client would send.
-- pgbench -D run=ID -D tasks=N -D k=0 --max-tries=8 ...
\set t 1 + (hash(:client_id * 1000000000 + :k) % :tasks + :tasks) % :tasks
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT owner, epoch, expires_at, version FROM owners
WHERE tenant = 'tenant-a' AND task = 'task-' || :t::text FOR UPDATE \gset
SELECT count(*) AS seen FROM operations
WHERE tenant = 'tenant-a' AND task = 'task-' || :t::text
  AND op_id = :run::text || '-' || :client_id::text || '-' || :k::text \gset
\if :seen = 0
INSERT INTO operations (tenant, task, op_id, payload_hash, state, epoch)
VALUES ('tenant-a', 'task-' || :t::text, :run::text || '-' || :client_id::text || '-' || :k::text,
        sha256(convert_to(:run::text || '-' || :client_id::text || '-' || :k::text, 'UTF8')), 'admitted', :epoch);
\endif
COMMIT;
BEGIN;
UPDATE operations SET state = 'succeeded'
WHERE tenant = 'tenant-a' AND task = 'task-' || :t::text
  AND op_id = :run::text || '-' || :client_id::text || '-' || :k::text AND state = 'admitted';
UPDATE owners SET version = version + 1 WHERE tenant = 'tenant-a' AND task = 'task-' || :t::text AND epoch = :epoch;
COMMIT;
\set k :k + 1
