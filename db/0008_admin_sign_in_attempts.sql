-- Console sign-in tries counted before the password is checked (decisions §25, §14): one
-- row per subject, taken by one atomic upsert, replaces a row per failure and a lock table
-- read apart from it (a burst of guesses all passed the read before any failure was
-- written). Live state that expires within 15 minutes: the old rows are not carried over.

-- subject: `email:<lower-cased email>` or `address:<client address>`. `attempts` counts the
-- tries of the window that began at `window_start` (each counted before its check, a
-- successful one given back); the tenth sets `locked_until`, 15 minutes on.
CREATE TABLE admin_sign_in_attempts (
  subject      TEXT PRIMARY KEY,
  window_start TEXT NOT NULL,
  attempts     INTEGER NOT NULL CHECK (attempts >= 0),
  locked_until TEXT
) STRICT, WITHOUT ROWID;
CREATE INDEX admin_sign_in_attempts_window ON admin_sign_in_attempts(window_start);

DROP TABLE admin_sign_in_failures;
DROP TABLE admin_sign_in_locks;
