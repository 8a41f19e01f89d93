-- The minimal baseline for one claim of a fresh task (bench/run.sh, pgbench -M prepared,
-- PGOPTIONS search_path=minimal): one SERIALIZABLE transaction on bench/minimal_schema.sql's
-- owners, the owner row FOR UPDATE (a fresh task has none), then the upsert that takes a new
-- epoch from the sequence (and takes over an expired lease, never a live one).
-- Task names as gateway-load's claim mode: trip-<run>-<m>, or <16 hex>-<run>-<m> with
-- -D random=1, m = 1, 2, ... over all clients (client c's k-th claim is m = (k-1)*clients+c+1).
-- pgbench -D run=ID -D random=0|1 -D k=0 -D clients=C --max-tries=8 ...
\set m :k * :clients + :client_id + 1
\set k :k + 1
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT owner, epoch, expires_at FROM owners
WHERE tenant = 'tenant-a'
  AND task = CASE WHEN :random = 1 THEN substr(md5(:run::text || '-' || :m::text), 1, 16) || '-' ELSE 'trip-' END
             || :run::text || '-' || :m::text
FOR UPDATE;
INSERT INTO owners (tenant, task, owner, epoch, expires_at)
VALUES ('tenant-a',
        CASE WHEN :random = 1 THEN substr(md5(:run::text || '-' || :m::text), 1, 16) || '-' ELSE 'trip-' END
        || :run::text || '-' || :m::text,
        'minimal-' || :client_id::text, nextval('epoch_seq'), now() + interval '1 hour')
ON CONFLICT (tenant, task) DO UPDATE
  SET owner = excluded.owner, epoch = excluded.epoch, expires_at = excluded.expires_at
  WHERE owners.expires_at <= now()
RETURNING epoch;
COMMIT;
