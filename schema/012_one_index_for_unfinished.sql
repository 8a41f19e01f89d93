-- One partial index finds the operations not finished, for everything that
-- looks for them: the operator listing, the sweep of abandoned forwards
-- (in_flight past its deadline) and the reconciler (unknown, due for a
-- lookup). They are few at any time, the ones in flight now and the ones
-- held, so each of those READ COMMITTED scans reads them all through
-- operations_unresolved and filters and sorts what it needs.
-- Every index of operations costs each admission and outcome: PostgreSQL
-- opens every index of a table a statement writes, builds each partial
-- predicate and index expression again for that statement, and an admission
-- (state in_flight) inserted into both partial indexes below
-- (docs/performance.md, "Value rules as domains, one index for what is
-- unfinished, ...").
DROP INDEX operations_forward_deadline;
DROP INDEX operations_lookup_due;
