-- Statistics of operations: a small sample, and none for columns no
-- statement filters on.
--
-- Every protected write inserts a row here and updates it once, so
-- autovacuum analyses the table about once a minute under load. ANALYZE
-- samples 300 rows per unit of the largest statistics target (30,000 at the
-- default 100) and sorts every column's values; with 36 columns, a bytea
-- body and a jsonb of headers, that took 0.2 s on an idle machine and 1 to
-- 1.8 s beside a full write load, which lost a third to half of its
-- throughput meanwhile (docs/performance.md, "ANALYZE of operations").
--
-- The statements find operations by key, or through the partial indexes,
-- with sequential scans off (store/pool.cpp): no plan turns on these
-- histograms. A target of 10 (a 3,000-row sample) is kept for the columns a
-- WHERE, ORDER BY or join names (ledger, sweep, reconcile, retention,
-- operator listings, webhook matching); the others, written and returned
-- but never searched, get no statistics. A column added later takes the
-- default until its migration says which it is (tests/store/migration_tests.cpp
-- holds every column to one of the two).
ALTER TABLE operations
  ALTER COLUMN tenant                  SET STATISTICS 10,
  ALTER COLUMN task                    SET STATISTICS 10,
  ALTER COLUMN op_id                   SET STATISTICS 10,
  ALTER COLUMN state                   SET STATISTICS 10,
  ALTER COLUMN attempts                SET STATISTICS 10,
  ALTER COLUMN provider                SET STATISTICS 10,
  ALTER COLUMN upstream_key            SET STATISTICS 10,
  ALTER COLUMN expected_version        SET STATISTICS 10,
  ALTER COLUMN updated_ms              SET STATISTICS 10,
  ALTER COLUMN forward_deadline_ms     SET STATISTICS 10,
  ALTER COLUMN held_reason             SET STATISTICS 10,
  ALTER COLUMN lookup_attempt          SET STATISTICS 10,
  ALTER COLUMN next_lookup_ms          SET STATISTICS 10,
  ALTER COLUMN fingerprint             SET STATISTICS 0,
  ALTER COLUMN method                  SET STATISTICS 0,
  ALTER COLUMN target                  SET STATISTICS 0,
  ALTER COLUMN created_ms              SET STATISTICS 0,
  ALTER COLUMN committed_version       SET STATISTICS 0,
  ALTER COLUMN response_status         SET STATISTICS 0,
  ALTER COLUMN response_headers        SET STATISTICS 0,
  ALTER COLUMN response_body           SET STATISTICS 0,
  ALTER COLUMN response_sha256         SET STATISTICS 0,
  ALTER COLUMN response_length         SET STATISTICS 0,
  ALTER COLUMN resolved_by             SET STATISTICS 0,
  ALTER COLUMN resolved_ms             SET STATISTICS 0,
  ALTER COLUMN resolution_evidence     SET STATISTICS 0,
  ALTER COLUMN lookups                 SET STATISTICS 0,
  ALTER COLUMN last_lookup_ms          SET STATISTICS 0,
  ALTER COLUMN attempt_realm           SET STATISTICS 0,
  ALTER COLUMN attempt_owner           SET STATISTICS 0,
  ALTER COLUMN attempt_epoch           SET STATISTICS 0,
  ALTER COLUMN attempt_admitted_ms     SET STATISTICS 0,
  ALTER COLUMN attempt_outcome         SET STATISTICS 0,
  ALTER COLUMN attempt_outcome_ms      SET STATISTICS 0,
  ALTER COLUMN attempt_upstream_status SET STATISTICS 0,
  ALTER COLUMN attempt_detail          SET STATISTICS 0;
