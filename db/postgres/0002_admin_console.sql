-- The admin console (decisions §14), as db/0006_admin_console.sql: accounts, sessions kept
-- in the database so every node knows them, sign-in failures and locks, the one-time
-- setup link, and the console's CSV imports with their progress.

CREATE TABLE admins (
  id            text COLLATE "C" PRIMARY KEY,
  email         text COLLATE "C" NOT NULL,
  -- lower-cased email: one account per address whatever its case
  email_key     text COLLATE "C" NOT NULL UNIQUE,
  -- scrypt$N$r$p$salt$hash: the parameters travel with the hash (src/admin/password.ts)
  password_hash text COLLATE "C" NOT NULL,
  created_at    text COLLATE "C" NOT NULL,
  updated_at    text COLLATE "C" NOT NULL
);

-- The cookie carries a random token; only its SHA-256 is stored (as API keys).
CREATE TABLE admin_sessions (
  id           text COLLATE "C" PRIMARY KEY,
  admin_id     text COLLATE "C" NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
  csrf_token   text COLLATE "C" NOT NULL,
  created_at   text COLLATE "C" NOT NULL,
  last_seen_at text COLLATE "C" NOT NULL
);
CREATE INDEX admin_sessions_admin ON admin_sessions(admin_id);
CREATE INDEX admin_sessions_seen ON admin_sessions(last_seen_at);

-- subject: `email:<lower-cased email>` or `address:<client address>`.
CREATE TABLE admin_sign_in_failures (
  subject text COLLATE "C" NOT NULL,
  at      text COLLATE "C" NOT NULL
);
CREATE INDEX admin_sign_in_failures_subject ON admin_sign_in_failures(subject, at);
CREATE INDEX admin_sign_in_failures_at ON admin_sign_in_failures(at);

CREATE TABLE admin_sign_in_locks (
  subject text COLLATE "C" PRIMARY KEY,
  until   text COLLATE "C" NOT NULL
);

CREATE TABLE admin_setup_tokens (
  token_hash text COLLATE "C" PRIMARY KEY,
  expires_at text COLLATE "C" NOT NULL,
  used_at    text COLLATE "C"
);

-- A CSV import started in the console: its progress and summary, readable from any node.
CREATE TABLE admin_imports (
  id             text COLLATE "C" PRIMARY KEY,
  project_id     text COLLATE "C" NOT NULL REFERENCES projects(id),
  file_name      text COLLATE "C" NOT NULL,
  status         text COLLATE "C" NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  bytes_total    integer NOT NULL,
  bytes_read     integer NOT NULL DEFAULT 0,
  rows_read      integer NOT NULL DEFAULT 0,
  created        integer NOT NULL DEFAULT 0,
  skipped_count  integer NOT NULL DEFAULT 0,
  -- JSON array of { row, reason, fieldName? }, the first 1,000
  skipped        text COLLATE "C" NOT NULL DEFAULT '[]',
  error          text COLLATE "C",
  created_at     text COLLATE "C" NOT NULL,
  updated_at     text COLLATE "C" NOT NULL
);
CREATE INDEX admin_imports_project ON admin_imports(project_id, created_at);
