-- Evidence from every source that can settle a held operation, kept as
-- received beside the record it settles: the provider's status lookup, a
-- signed provider webhook, and an operator's resolution. Each keeps what the
-- source said (status, headers, body, digest) and who said it.
ALTER TABLE operation_evidence DROP CONSTRAINT operation_evidence_source_check;
ALTER TABLE operation_evidence ADD CONSTRAINT operation_evidence_source_check
  CHECK (source IN ('sweep', 'late_reply', 'lookup', 'webhook', 'operator'));

ALTER TABLE operation_evidence
  ADD COLUMN response_headers jsonb,  -- the source's reply headers, [[name, value], ...]
  ADD COLUMN response_body    bytea,  -- the source's reply body, exactly as received
  ADD COLUMN reference        text,   -- an operator's evidence reference, a webhook id
  ADD COLUMN actor            text;   -- operator token name, provider name
