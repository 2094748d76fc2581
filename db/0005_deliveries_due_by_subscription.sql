-- The dispatcher looks for due deliveries subscription by subscription, round robin
-- across projects (decisions §16: fair delivery): each lookup is a seek on
-- (webhook_id, status, next_attempt_at) that reads a few rows in due order, so a busy
-- subscription's backlog is never walked and a disabled one's parked rows are never read.
-- It carries the id, so the ids of due rows (those in flight skipped) come from the index
-- alone. It replaces deliveries_webhook, whose (webhook_id, status) it extends.
DROP INDEX IF EXISTS deliveries_webhook;
CREATE INDEX deliveries_webhook_due ON deliveries(webhook_id, status, next_attempt_at, id);
