-- Signed provider webhooks (spec section 4): every verified delivery is kept
-- exactly as received, once per (provider, webhook id), before anything reads
-- it; matching it to an operation is a second step that records evidence.

-- One row per verified delivery. 'received' until the matching step has run
-- (a delivery left there was stored by a gateway that stopped before
-- matching it; the provider's redelivery finishes it). Then 'matched' (an
-- evidence row exists), 'unmatched' (no operation of this provider has the
-- key) or 'unparsable' (no key in the body): both kept for operators.
CREATE TABLE webhook_deliveries (
  id                bigserial PRIMARY KEY,
  provider          text    NOT NULL,
  webhook_id        text    NOT NULL,
  webhook_timestamp bigint  NOT NULL,  -- unix seconds, as signed by the provider
  received_ms       bigint  NOT NULL,  -- authority time at storage
  body              bytea   NOT NULL,  -- exactly the bytes that were signed
  status            text    NOT NULL DEFAULT 'received'
                    CHECK (status IN ('received', 'matched', 'unmatched', 'unparsable')),
  processed_ms      bigint,            -- authority time of the matching step
  upstream_key      text,              -- the key the body names, when it names one
  outcome           text,              -- the outcome value the body holds, as text
  mapped_outcome    text    CHECK (mapped_outcome IN ('succeeded', 'rejected', 'not_executed')),
  detail            text,              -- what the matching step read or why it failed
  tenant            text,              -- matched: the operation
  task              text,
  op_id             text,
  attempt           integer,
  evidence_id       bigint  REFERENCES operation_evidence (id),
  UNIQUE (provider, webhook_id),
  FOREIGN KEY (tenant, task, op_id) REFERENCES operations (tenant, task, op_id),
  CHECK ((status = 'matched') = (op_id IS NOT NULL AND evidence_id IS NOT NULL))
);

-- The operators' listing of deliveries that settled nothing, in arrival order.
CREATE INDEX webhook_deliveries_unsettled ON webhook_deliveries (id) WHERE status <> 'matched';

-- The matching step finds an operation by the key the provider saw. It runs
-- at READ COMMITTED: a SERIALIZABLE scan of this index would take predicate
-- locks on the pages every admission inserts into (docs/design.md).
CREATE INDEX operations_by_upstream_key ON operations (upstream_key);
