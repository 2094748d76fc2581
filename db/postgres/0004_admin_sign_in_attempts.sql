-- Console sign-in tries counted before the password is checked (decisions §25, §14); as
-- db/0008_admin_sign_in_attempts.sql. The upsert that counts a try locks its row until
-- the transaction ends, so nodes counting for one subject take turns on it.

CREATE TABLE admin_sign_in_attempts (
  subject      text COLLATE "C" PRIMARY KEY,
  window_start text COLLATE "C" NOT NULL,
  attempts     integer NOT NULL CHECK (attempts >= 0),
  locked_until text COLLATE "C"
);
CREATE INDEX admin_sign_in_attempts_window ON admin_sign_in_attempts(window_start);

DROP TABLE admin_sign_in_failures;
DROP TABLE admin_sign_in_locks;
