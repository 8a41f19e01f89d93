-- The attempt an operation is on (in flight, or the last one made) is kept
-- in the operation's own row; only the attempts a re-admission superseded
-- have rows of their own, in earlier_attempts. The view operation_attempts
-- shows both, as the table of that name did.
-- Why: every protected write inserted an attempt row at admission and
-- updated it with the outcome, a second table in both of its statements: a
-- heap insert, a primary-key insert and an update, about 280 bytes of WAL
-- of the 2,300 a write cost, plus the statements' work on one more table
-- (docs/performance.md, "The current attempt in its operation's row").
-- A re-admission (of a not_executed operation, rare) copies the attempt it
-- supersedes into earlier_attempts in the statement that starts the next.

ALTER TABLE operation_attempts RENAME TO earlier_attempts;
ALTER INDEX operation_attempts_pkey RENAME TO earlier_attempts_pkey;

ALTER TABLE operations
  ADD COLUMN attempt_realm           text,
  ADD COLUMN attempt_owner           text,
  ADD COLUMN attempt_epoch           gw_epoch,
  ADD COLUMN attempt_admitted_ms     bigint,
  ADD COLUMN attempt_outcome         gw_attempt_outcome,
  ADD COLUMN attempt_outcome_ms      bigint,
  ADD COLUMN attempt_upstream_status integer,
  ADD COLUMN attempt_detail          text;

UPDATE operations o
SET attempt_realm = a.realm, attempt_owner = a.owner, attempt_epoch = a.epoch,
    attempt_admitted_ms = a.admitted_ms, attempt_outcome = a.outcome, attempt_outcome_ms = a.outcome_ms,
    attempt_upstream_status = a.upstream_status, attempt_detail = a.detail
FROM earlier_attempts a
WHERE a.tenant = o.tenant AND a.task = o.task AND a.op_id = o.op_id AND a.attempt = o.attempts;

DELETE FROM earlier_attempts a
USING operations o
WHERE a.tenant = o.tenant AND a.task = o.task AND a.op_id = o.op_id AND a.attempt = o.attempts;

-- Every operation was admitted by a grant: its current attempt says which.
ALTER TABLE operations
  ALTER COLUMN attempt_realm SET NOT NULL,
  ALTER COLUMN attempt_owner SET NOT NULL,
  ALTER COLUMN attempt_epoch SET NOT NULL,
  ALTER COLUMN attempt_admitted_ms SET NOT NULL;

-- Every attempt of every operation, each with the grant that admitted it,
-- for readers (the operator's operation detail, audits).
CREATE VIEW operation_attempts AS
  SELECT tenant, task, op_id, attempt, realm, owner, epoch, admitted_ms, outcome, outcome_ms, upstream_status,
         detail
  FROM earlier_attempts
  UNION ALL
  SELECT tenant, task, op_id, attempts, attempt_realm, attempt_owner, attempt_epoch, attempt_admitted_ms,
         attempt_outcome, attempt_outcome_ms, attempt_upstream_status, attempt_detail
  FROM operations;
