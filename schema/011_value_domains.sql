-- The value rules of the tables every claim and protected write touches, as
-- domains instead of table CHECK constraints (docs/performance.md, "Value
-- rules as domains, ..."). PostgreSQL 15 parses and plans every CHECK
-- of a table again in each statement that writes it, and tests them all on
-- every row written, changed or not: on the request path that was a sixth of
-- the database's CPU per protected write. A domain's rule is parsed once per
-- session (the type cache) and tested only where a value is assigned to it.
-- The rules themselves are unchanged.

CREATE DOMAIN gw_sha256 AS bytea CHECK (length(VALUE) = 32);
CREATE DOMAIN gw_epoch AS bigint CHECK (VALUE > 0);
CREATE DOMAIN gw_non_negative AS bigint CHECK (VALUE >= 0);
CREATE DOMAIN gw_attempt AS integer CHECK (VALUE > 0);
CREATE DOMAIN gw_count AS integer CHECK (VALUE >= 0);
CREATE DOMAIN gw_operation_state AS text
  CHECK (VALUE IN ('in_flight', 'succeeded', 'rejected', 'not_executed', 'unknown'));
CREATE DOMAIN gw_attempt_outcome AS text
  CHECK (VALUE IN ('succeeded', 'rejected', 'not_executed', 'unknown'));
CREATE DOMAIN gw_held_reason AS text CHECK (VALUE IN ('outcome_unknown', 'forward_abandoned'));
CREATE DOMAIN gw_resolution_source AS text CHECK (VALUE IN ('lookup', 'webhook', 'operator'));

-- A domain over the column's own type: no table rewrite, one scan to check.
ALTER TABLE tasks
  DROP CONSTRAINT tasks_epoch_check,
  DROP CONSTRAINT tasks_secret_hash_check,
  DROP CONSTRAINT tasks_expires_at_ms_check,
  DROP CONSTRAINT tasks_granted_at_ms_check,
  ALTER COLUMN epoch TYPE gw_epoch,
  ALTER COLUMN secret_hash TYPE gw_sha256,
  ALTER COLUMN expires_at_ms TYPE gw_non_negative,
  ALTER COLUMN granted_at_ms TYPE gw_non_negative;

ALTER TABLE task_ledger
  DROP CONSTRAINT task_ledger_version_check,
  ALTER COLUMN version TYPE gw_non_negative;

ALTER TABLE operations
  DROP CONSTRAINT operations_fingerprint_check,
  DROP CONSTRAINT operations_expected_version_check,
  DROP CONSTRAINT operations_state_check,
  DROP CONSTRAINT operations_attempts_check,
  DROP CONSTRAINT operations_held_reason_check,
  DROP CONSTRAINT operations_resolved_by_check,
  DROP CONSTRAINT operations_lookups_check,
  ALTER COLUMN fingerprint TYPE gw_sha256,
  ALTER COLUMN expected_version TYPE gw_non_negative,
  ALTER COLUMN state TYPE gw_operation_state,
  ALTER COLUMN attempts TYPE gw_attempt,
  ALTER COLUMN held_reason TYPE gw_held_reason,
  ALTER COLUMN resolved_by TYPE gw_resolution_source,
  ALTER COLUMN lookups TYPE gw_count;

ALTER TABLE operation_attempts
  DROP CONSTRAINT operation_attempts_attempt_check,
  DROP CONSTRAINT operation_attempts_outcome_check,
  ALTER COLUMN attempt TYPE gw_attempt,
  ALTER COLUMN outcome TYPE gw_attempt_outcome;
