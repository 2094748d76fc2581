-- The admin console (decisions §14): accounts, sessions kept in the database so every
-- node knows them, sign-in failures and locks (10 in 15 minutes per email or address),
-- the one-time setup link, and the console's CSV imports with their progress.

CREATE TABLE admins (
  id            TEXT PRIMARY KEY,
  email         TEXT NOT NULL,
  -- lower-cased email: one account per address whatever its case
  email_key     TEXT NOT NULL UNIQUE,
  -- scrypt$N$r$p$salt$hash: the parameters travel with the hash (src/admin/password.ts)
  password_hash TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
) STRICT;

-- The cookie carries a random token; only its SHA-256 is stored (as API keys).
CREATE TABLE admin_sessions (
  id           TEXT PRIMARY KEY,
  admin_id     TEXT NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
  csrf_token   TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_seen_at TEXT NOT NULL
) STRICT;
CREATE INDEX admin_sessions_admin ON admin_sessions(admin_id);
CREATE INDEX admin_sessions_seen ON admin_sessions(last_seen_at);

-- subject: `email:<lower-cased email>` or `address:<client address>`.
CREATE TABLE admin_sign_in_failures (
  subject TEXT NOT NULL,
  at      TEXT NOT NULL
) STRICT;
CREATE INDEX admin_sign_in_failures_subject ON admin_sign_in_failures(subject, at);
CREATE INDEX admin_sign_in_failures_at ON admin_sign_in_failures(at);

CREATE TABLE admin_sign_in_locks (
  subject TEXT PRIMARY KEY,
  until   TEXT NOT NULL
) STRICT;

CREATE TABLE admin_setup_tokens (
  token_hash TEXT PRIMARY KEY,
  expires_at TEXT NOT NULL,
  used_at    TEXT
) STRICT;

-- A CSV import started in the console: its progress and summary, readable from any node.
CREATE TABLE admin_imports (
  id             TEXT PRIMARY KEY,
  project_id     TEXT NOT NULL REFERENCES projects(id),
  file_name      TEXT NOT NULL,
  status         TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  bytes_total    INTEGER NOT NULL,
  bytes_read     INTEGER NOT NULL DEFAULT 0,
  rows_read      INTEGER NOT NULL DEFAULT 0,
  created        INTEGER NOT NULL DEFAULT 0,
  skipped_count  INTEGER NOT NULL DEFAULT 0,
  -- JSON array of { row, reason, fieldName? }, the first 1,000
  skipped        TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(skipped)),
  error          TEXT,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
) STRICT;
CREATE INDEX admin_imports_project ON admin_imports(project_id, created_at);
