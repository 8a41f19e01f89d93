-- The operation ledger: business version per task, operations by key, and
-- every attempt with the grant that admitted it.

-- Business state of a task, apart from its owner row: the confirmed version
-- and the operation holding the task (in flight, or unknown until resolved).
-- One row per task, so "is another operation unresolved?" is a point read.
CREATE TABLE task_ledger (
  tenant  text   NOT NULL,
  task    text   NOT NULL,
  version bigint NOT NULL DEFAULT 0 CHECK (version >= 0),
  open_op text,
  PRIMARY KEY (tenant, task)
);

-- One row per (tenant, task, Idempotency-Key): the operation's identity is
-- independent of the owner epoch, so a new owner's exact retry finds it.
CREATE TABLE operations (
  tenant            text    NOT NULL,
  task              text    NOT NULL,
  op_id             text    NOT NULL,
  fingerprint       bytea   NOT NULL CHECK (length(fingerprint) = 32),
  method            text    NOT NULL,
  provider          text    NOT NULL,
  target            text    NOT NULL,
  expected_version  bigint  NOT NULL CHECK (expected_version >= 0),
  upstream_key      text    NOT NULL,
  state             text    NOT NULL CHECK (state IN ('in_flight', 'succeeded', 'rejected', 'not_executed', 'unknown')),
  attempts          integer NOT NULL CHECK (attempts > 0),
  created_ms        bigint  NOT NULL,
  updated_ms        bigint  NOT NULL,
  committed_version bigint,
  response_status   integer,
  response_headers  jsonb,
  response_body     bytea,
  response_sha256   bytea,
  response_length   bigint,
  PRIMARY KEY (tenant, task, op_id)
);

-- Held and in-flight operations, for operators and the reconciliation sweep;
-- partial, so finished operations cost nothing here.
CREATE INDEX operations_unresolved ON operations (updated_ms)
  WHERE state IN ('in_flight', 'unknown');

-- Every admission of an operation (a not_executed one can be admitted again),
-- with the grant identity that admitted it, never rewritten.
CREATE TABLE operation_attempts (
  tenant          text    NOT NULL,
  task            text    NOT NULL,
  op_id           text    NOT NULL,
  attempt         integer NOT NULL CHECK (attempt > 0),
  realm           text    NOT NULL,
  owner           text    NOT NULL,
  epoch           bigint  NOT NULL,
  admitted_ms     bigint  NOT NULL,
  outcome         text    CHECK (outcome IN ('succeeded', 'rejected', 'not_executed', 'unknown')),
  outcome_ms      bigint,
  upstream_status integer,
  detail          text,
  PRIMARY KEY (tenant, task, op_id, attempt),
  FOREIGN KEY (tenant, task, op_id) REFERENCES operations (tenant, task, op_id)
);
