-- The same statistics as schema/014 gave operations, for the other tables
-- that grow with traffic: a refused write adds a rejection, a provider's
-- webhook a delivery with its body, a sweep or a provider lookup a piece of
-- evidence with the reply it got. A storm of stale writers, webhooks for
-- every booking, or a provider down while lookups repeat grows them as fast
-- as the writes grow operations, and autovacuum then analyses them about
-- once a minute: 100,000 rejections took 150 to 180 ms on an idle machine
-- at the default target, CPU a busy machine takes from the writes.
--
-- A target of 10 for the columns a statement filters, sorts or joins on
-- (the operator listings, webhook storage and matching, retention), none for
-- the columns only written and shown. tests/store/migration_tests.cpp holds
-- every column of these tables to one of the two.

ALTER TABLE rejections
  ALTER COLUMN id               SET STATISTICS 10,
  ALTER COLUMN tenant           SET STATISTICS 10,
  ALTER COLUMN task             SET STATISTICS 10,
  ALTER COLUMN code             SET STATISTICS 10,
  ALTER COLUMN recorded_ms      SET STATISTICS 10,
  ALTER COLUMN op_id            SET STATISTICS 0,
  ALTER COLUMN realm            SET STATISTICS 0,
  ALTER COLUMN grant_tenant     SET STATISTICS 0,
  ALTER COLUMN grant_task       SET STATISTICS 0,
  ALTER COLUMN owner            SET STATISTICS 0,
  ALTER COLUMN epoch            SET STATISTICS 0,
  ALTER COLUMN fingerprint      SET STATISTICS 0,
  ALTER COLUMN method           SET STATISTICS 0,
  ALTER COLUMN provider         SET STATISTICS 0,
  ALTER COLUMN target           SET STATISTICS 0,
  ALTER COLUMN expected_version SET STATISTICS 0,
  ALTER COLUMN request_id       SET STATISTICS 0;

ALTER TABLE webhook_deliveries
  ALTER COLUMN id                SET STATISTICS 10,
  ALTER COLUMN provider          SET STATISTICS 10,
  ALTER COLUMN webhook_id        SET STATISTICS 10,
  ALTER COLUMN received_ms       SET STATISTICS 10,
  ALTER COLUMN status            SET STATISTICS 10,
  ALTER COLUMN tenant            SET STATISTICS 10,
  ALTER COLUMN task              SET STATISTICS 10,
  ALTER COLUMN op_id             SET STATISTICS 10,
  ALTER COLUMN webhook_timestamp SET STATISTICS 0,
  ALTER COLUMN body              SET STATISTICS 0,
  ALTER COLUMN processed_ms      SET STATISTICS 0,
  ALTER COLUMN upstream_key      SET STATISTICS 0,
  ALTER COLUMN outcome           SET STATISTICS 0,
  ALTER COLUMN mapped_outcome    SET STATISTICS 0,
  ALTER COLUMN detail            SET STATISTICS 0,
  ALTER COLUMN attempt           SET STATISTICS 0,
  ALTER COLUMN evidence_id       SET STATISTICS 0;

ALTER TABLE operation_evidence
  ALTER COLUMN id               SET STATISTICS 10,
  ALTER COLUMN tenant           SET STATISTICS 10,
  ALTER COLUMN task             SET STATISTICS 10,
  ALTER COLUMN op_id            SET STATISTICS 10,
  ALTER COLUMN attempt          SET STATISTICS 0,
  ALTER COLUMN source           SET STATISTICS 0,
  ALTER COLUMN outcome          SET STATISTICS 0,
  ALTER COLUMN upstream_status  SET STATISTICS 0,
  ALTER COLUMN detail           SET STATISTICS 0,
  ALTER COLUMN response_sha256  SET STATISTICS 0,
  ALTER COLUMN response_length  SET STATISTICS 0,
  ALTER COLUMN recorded_ms      SET STATISTICS 0,
  ALTER COLUMN response_headers SET STATISTICS 0,
  ALTER COLUMN response_body    SET STATISTICS 0,
  ALTER COLUMN reference        SET STATISTICS 0,
  ALTER COLUMN actor            SET STATISTICS 0;
