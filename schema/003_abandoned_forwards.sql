-- Abandoned forwards: an attempt still in flight after its forward deadline
-- (admission time plus the provider's queue, connect and request timeouts
-- plus a margin) was orphaned by a process that died or lost its database,
-- and is swept to unknown so the task shows as held for reconciliation.

-- Authority ms after which the current attempt, if still in flight, is
-- abandoned; set by every admission. NULL for rows admitted before this
-- migration: those are swept as soon as a sweeper sees them.
ALTER TABLE operations ADD COLUMN forward_deadline_ms bigint;

-- Why an unknown operation is held (operators read it): 'outcome_unknown'
-- (the provider's answer did not settle it) or 'forward_abandoned' (swept).
ALTER TABLE operations ADD COLUMN held_reason text
  CHECK (held_reason IN ('outcome_unknown', 'forward_abandoned'));

-- The sweeper's scan. Only the sweeper reads it, at READ COMMITTED, so no
-- SERIALIZABLE predicate lock ever covers its pages (see docs/design.md).
CREATE INDEX operations_forward_deadline ON operations (forward_deadline_ms)
  WHERE state = 'in_flight';

-- Evidence about an operation that arrived besides the record that settled
-- it, kept as received and never rewritten: a late reply from the original
-- forwarder after a sweep, and (later) lookups, webhooks and operators.
CREATE TABLE operation_evidence (
  id              bigserial PRIMARY KEY,
  tenant          text    NOT NULL,
  task            text    NOT NULL,
  op_id           text    NOT NULL,
  attempt         integer NOT NULL,
  source          text    NOT NULL CHECK (source IN ('sweep', 'late_reply')),
  outcome         text    CHECK (outcome IN ('succeeded', 'rejected', 'not_executed', 'unknown')),
  upstream_status integer,
  detail          text    NOT NULL,
  response_sha256 bytea,
  response_length bigint,
  recorded_ms     bigint  NOT NULL,
  FOREIGN KEY (tenant, task, op_id) REFERENCES operations (tenant, task, op_id)
);
CREATE INDEX operation_evidence_by_operation ON operation_evidence (tenant, task, op_id);
