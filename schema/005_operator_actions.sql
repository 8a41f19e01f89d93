-- Operator actions and what they leave behind (spec section 4): held
-- operations resolved from evidence, leases ended by an operator, realm
-- rotations, and the audit trail of refused protected attempts.

-- A held operation settled by evidence instead of its own forward's reply:
-- which source, when, and the operation_evidence row that did it (written
-- by the same statement). The attempt rows are never rewritten, and a reply
-- kept from the unknown outcome stays in response_* for operators: it is
-- never replayed (an exact retry is resolved_without_reply). A re-admission
-- of an operation resolved not_executed clears these three.
ALTER TABLE operations
  ADD COLUMN resolved_by         text CHECK (resolved_by IN ('lookup', 'webhook', 'operator')),
  ADD COLUMN resolved_ms         bigint,
  ADD COLUMN resolution_evidence bigint,
  ADD CONSTRAINT operations_resolution_whole
    CHECK ((resolved_by IS NULL) = (resolved_ms IS NULL)
           AND (resolved_by IS NULL) = (resolution_evidence IS NULL));

-- Leases ended and realms rotated by operators, with who did it. Insert
-- only; nobody reads it SERIALIZABLE.
CREATE TABLE operator_actions (
  id          bigserial PRIMARY KEY,
  action      text   NOT NULL CHECK (action IN ('revoke', 'rotate_realm')),
  actor       text   NOT NULL,
  tenant      text,            -- revoke: the task whose lease ended
  task        text,
  realm       text   NOT NULL, -- revoke: the ended grant's realm; rotate: the new realm
  owner       text,            -- revoke: the ended grant
  epoch       bigint,
  detail      text   NOT NULL,
  recorded_ms bigint NOT NULL
);

-- Every refused protected attempt, with the grant identity exactly as it
-- was presented (never rewritten to the task's current epoch). Written by
-- the admission transaction's reject branch as an INSERT only: nobody reads
-- this table SERIALIZABLE, so it adds no serialization conflicts. Columns a
-- refusal before admission may not know (no decodable grant, no key) are
-- nullable.
CREATE TABLE rejections (
  id               bigserial PRIMARY KEY,
  tenant           text   NOT NULL,
  task             text   NOT NULL,
  op_id            text,
  realm            text,   -- the presented grant: realm, its own tenant and
  grant_tenant     text,   -- task (scope_mismatch shows them), owner, epoch
  grant_task       text,
  owner            text,
  epoch            bigint,
  fingerprint      bytea  CHECK (length(fingerprint) = 32),
  method           text   NOT NULL,
  provider         text   NOT NULL,
  target           text   NOT NULL,
  expected_version bigint,
  code             text   NOT NULL,
  request_id       text,
  recorded_ms      bigint NOT NULL
);
-- The listing's order (GET /v1/admin/rejections, READ COMMITTED), overall
-- and per task.
CREATE INDEX rejections_by_time ON rejections (recorded_ms, id);
CREATE INDEX rejections_by_task ON rejections (tenant, task, recorded_ms, id);
