-- An operation's resolution (what settled it, when, and the evidence row) as
-- one value whose domain keeps it whole, instead of three columns and the
-- table CHECK operations_resolution_whole (schema/005).
-- Why: PostgreSQL 15 reads a table's CHECK constraints back from their
-- catalog text, plans them again in every statement that writes the table
-- (ExecRelCheck) and tests them on every row written, whichever columns
-- changed: every admission and every outcome paid for a rule about columns
-- neither of them writes, about 4% of the database's work per protected
-- write (docs/performance.md, "The resolution as one value"). A domain's rule
-- is parsed once per session and tested where a value is assigned to the
-- column: by the resolutions that set it and the re-admission that clears it.
-- The rule itself is unchanged.

CREATE TYPE operation_resolution AS (
  source      gw_resolution_source,
  resolved_ms bigint,
  evidence    bigint
);

-- Whole or absent: a composite value IS NULL when every field is null, and
-- IS NOT NULL when none is.
CREATE DOMAIN gw_resolution AS operation_resolution CHECK (VALUE IS NULL OR VALUE IS NOT NULL);

-- Added with the plain type and then moved to the domain (over the column's
-- own type: no table rewrite, one scan to check), because adding a column
-- of a constrained domain rewrites the whole table.
ALTER TABLE operations ADD COLUMN resolution operation_resolution;

UPDATE operations
SET resolution = ROW(resolved_by, resolved_ms, resolution_evidence)::operation_resolution
WHERE resolved_by IS NOT NULL OR resolved_ms IS NOT NULL OR resolution_evidence IS NOT NULL;

ALTER TABLE operations
  DROP CONSTRAINT operations_resolution_whole,
  DROP COLUMN resolved_by,
  DROP COLUMN resolved_ms,
  DROP COLUMN resolution_evidence,
  ALTER COLUMN resolution TYPE gw_resolution,
  -- Never a condition of a hot statement (schema/014).
  ALTER COLUMN resolution SET STATISTICS 0;
