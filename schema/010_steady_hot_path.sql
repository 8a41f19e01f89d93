-- Room for many more updates to stay on their page (HOT) between two prunes
-- (docs/performance.md, "Protected writes under contention"). A page can only
-- be pruned of versions no running transaction may still see; when the
-- machine is busy, transactions last longer, pruning falls behind, and at
-- fillfactor 50 a page of ledger rows (some 45 of them) filled in tens of
-- milliseconds. An update that then leaves its page adds an entry to the
-- primary key: a write into the one leaf page every concurrent decision of a
-- task on it has read, a read-write conflict with each of them, and enough of
-- those make the pivots SERIALIZABLE aborts. At 10 a page holds about nine
-- tasks' rows with room for some 80 versions. The tables hold one row per
-- task, so the space is small. Applies to pages written from now on: a row
-- on a full old page moves once, to a page written at the new setting.
ALTER TABLE task_ledger SET (fillfactor = 10);
ALTER TABLE tasks SET (fillfactor = 10);
