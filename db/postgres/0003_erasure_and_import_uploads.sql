-- Erasure and the console's import preview (decisions §17); as db/0007.

CREATE TABLE erased_contacts (
  project_id     text COLLATE "C" NOT NULL REFERENCES projects(id),
  contact_number bigint NOT NULL,
  erased_at      text COLLATE "C" NOT NULL,
  PRIMARY KEY (project_id, contact_number)
);

CREATE TABLE admin_import_uploads (
  id          text COLLATE "C" PRIMARY KEY,
  project_id  text COLLATE "C" NOT NULL REFERENCES projects(id),
  file_name   text COLLATE "C" NOT NULL,
  body        bytea NOT NULL,
  created_at  text COLLATE "C" NOT NULL
);
CREATE INDEX admin_import_uploads_age ON admin_import_uploads(created_at);
