-- Reconciliation by provider lookup: when each held (unknown) operation is
-- next looked up at its provider, and how often it has been. Evidence from
-- each lookup goes to operation_evidence (source 'lookup').
--
-- The schedule belongs to one attempt (lookup_attempt): when a re-admitted
-- operation is held again under a later attempt, the old schedule is stale
-- and the operation is due at once with no lookups counted. So nothing that
-- admits or records an outcome has to reset these columns.
ALTER TABLE operations
  ADD COLUMN lookup_attempt integer,                                 -- the attempt the schedule is for
  ADD COLUMN lookups        integer NOT NULL DEFAULT 0 CHECK (lookups >= 0),  -- recorded for that attempt
  ADD COLUMN last_lookup_ms bigint,                                  -- authority ms of the last recorded lookup
  ADD COLUMN next_lookup_ms bigint;                                  -- due from; NULL: never scheduled, due now

-- "Held unknown operations due for lookup", ordered by when they are due.
-- The expression is the due time (0 when never scheduled for the current
-- attempt); reconcile_store.cpp writes the same expression so the index
-- serves it. Only the reconciler reads it, at READ COMMITTED, so no
-- SERIALIZABLE predicate lock ever covers its pages (see docs/design.md).
CREATE INDEX operations_lookup_due ON operations
  ((CASE WHEN lookup_attempt = attempts THEN coalesce(next_lookup_ms, 0) ELSE 0 END))
  WHERE state = 'unknown';
