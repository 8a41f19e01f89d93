-- The authority: realm, clock, epochs and the published fence of each task.

-- One row: the realm (identity of this authority store) and its clocks.
-- clock_floor_ms is advanced by every gateway in short READ COMMITTED
-- transactions, so authority time never moves back past it even when the
-- server clock steps back; decisions only read it.
-- manual_now_ms is authority time under the explicit manual test clock.
CREATE TABLE authority (
  singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  realm          text    NOT NULL,
  clock_floor_ms bigint  NOT NULL DEFAULT 0 CHECK (clock_floor_ms >= 0),
  manual_now_ms  bigint  NOT NULL DEFAULT 0 CHECK (manual_now_ms >= 0),
  realm_since    timestamptz NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO authority (realm) VALUES (gen_random_uuid()::text);

-- Epochs come from a sequence rather than a counter row: claims of different
-- tasks never serialize on one row, and nextval never hands a value out twice
-- (NO CYCLE; exhaustion raises 2200H, reported as epoch_exhausted).
CREATE SEQUENCE epoch_seq AS bigint MINVALUE 1 MAXVALUE 9223372036854775807 NO CYCLE;

-- The current owner of each task: the fence every protected write compares
-- against. Written only by claim, renew and release; the ledger's outcome
-- transaction never writes here, so admissions do not conflict with it.
CREATE TABLE tasks (
  tenant        text   NOT NULL,
  task          text   NOT NULL,
  owner         text   NOT NULL,
  epoch         bigint NOT NULL CHECK (epoch > 0),
  secret_hash   bytea  NOT NULL CHECK (length(secret_hash) = 32),
  expires_at_ms bigint NOT NULL CHECK (expires_at_ms >= 0),
  granted_at_ms bigint NOT NULL CHECK (granted_at_ms >= 0),
  PRIMARY KEY (tenant, task)
);
