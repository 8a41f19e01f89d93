-- The request path's SERIALIZABLE transactions, kept off index pages that
-- other tasks write (docs/performance.md, "Serialization failures between
-- unrelated tasks"). PostgreSQL locks a B-tree lookup at page granularity, and
-- every insert into a locked page is a read-write conflict with its reader:
-- with keys named in sequence (trip-1, trip-2, ...) every active task shares
-- the same few pages, and enough such conflicts abort transactions that never
-- touched each other's rows.

-- An attempt row is only ever inserted by the statement that inserts or
-- re-admits its operation (store/ledger_store.cpp). The foreign key's check
-- looked the operation up in operations_pkey at every admission: a page read,
-- on the very page every other new key is inserted into.
ALTER TABLE operation_attempts DROP CONSTRAINT operation_attempts_tenant_task_op_id_fkey;

-- Room on each page for updates of rows to stay on their page (HOT): an
-- update that moves a row adds an entry to the primary key, a write into the
-- page other tasks' transactions have read. The ledger row changes twice per
-- protected request, the owner row on every claim and renewal, the attempt
-- once. Applies to pages written from now on.
ALTER TABLE task_ledger SET (fillfactor = 50);
ALTER TABLE tasks SET (fillfactor = 50);
ALTER TABLE operation_attempts SET (fillfactor = 70);
