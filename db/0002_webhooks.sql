-- Webhook subscriptions, the delivery outbox and the attempt log (interface §2.3, §6;
-- decisions §7). Secrets are stored AES-GCM encrypted, never in clear.

CREATE TABLE webhooks (
  id                   TEXT PRIMARY KEY,
  project_id           TEXT NOT NULL REFERENCES projects(id),
  url                  TEXT NOT NULL,
  events               TEXT NOT NULL,
  description          TEXT,
  status               TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
  secret               TEXT NOT NULL,
  previous_secret      TEXT,
  previous_secret_until TEXT,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  last_success_at      TEXT,
  last_failure_reason  TEXT,
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL
) STRICT;
CREATE INDEX webhooks_project ON webhooks(project_id, created_at, id);

-- One row per (event, subscription): the transactional outbox. `id` is the delivery id
-- sent as X-Service-Delivery, stable across retries.
CREATE TABLE deliveries (
  id              TEXT PRIMARY KEY,
  event_id        TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  webhook_id      TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'in_flight', 'succeeded', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
) STRICT;
CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
CREATE INDEX deliveries_webhook ON deliveries(webhook_id, status);
CREATE INDEX deliveries_event ON deliveries(event_id);

CREATE TABLE delivery_attempts (
  id               TEXT PRIMARY KEY,
  delivery_id      TEXT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
  webhook_id       TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_id         TEXT NOT NULL,
  attempt          INTEGER NOT NULL,
  at               TEXT NOT NULL,
  status_code      INTEGER,
  duration_ms      INTEGER NOT NULL,
  error            TEXT,
  response_snippet TEXT
) STRICT;
CREATE INDEX delivery_attempts_webhook ON delivery_attempts(webhook_id, at DESC, id DESC);
CREATE INDEX delivery_attempts_age ON delivery_attempts(at);
CREATE INDEX events_age ON events(created_at);
