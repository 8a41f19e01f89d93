-- Retention (issue #7): the background job removes old finished operations,
-- rejections and unmatched webhook deliveries in small batches, oldest first.
-- These indexes let each batch find its oldest rows without scanning the
-- tables, so a pass stays short however much history there is.

-- Finished operations by the time they last changed (outcome, resolution).
CREATE INDEX operations_finished ON operations (updated_ms)
  WHERE state IN ('succeeded', 'rejected', 'not_executed');

-- Deliveries matched to nothing, by arrival; matched ones leave with their operation.
CREATE INDEX webhook_deliveries_by_arrival ON webhook_deliveries (received_ms)
  WHERE status <> 'matched';

-- Evidence and attempts are removed by operation (operation_evidence_by_operation
-- and operation_attempts' primary key); webhook deliveries matched to an
-- operation need the same.
CREATE INDEX webhook_deliveries_by_operation ON webhook_deliveries (tenant, task, op_id)
  WHERE op_id IS NOT NULL;
