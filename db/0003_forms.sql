-- Web forms and their submissions (decisions §10). Forms are made in product settings
-- (`crm form create`); `fields` is a JSON array of contact field names and custom-field
-- ids, resolved when the form is created.

CREATE TABLE forms (
  id           TEXT PRIMARY KEY,
  project_id   TEXT NOT NULL REFERENCES projects(id),
  name         TEXT NOT NULL,
  fields       TEXT NOT NULL CHECK (json_valid(fields)),
  redirect_url TEXT,
  created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX forms_project ON forms(project_id, created_at, id);

-- One row per accepted submission; `values` holds what was submitted, keyed by field name.
-- Honeypot hits and refused submissions leave no row.
CREATE TABLE form_submissions (
  id           TEXT PRIMARY KEY,
  form_id      TEXT NOT NULL REFERENCES forms(id),
  project_id   TEXT NOT NULL REFERENCES projects(id),
  contact_id   INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  "values"     TEXT NOT NULL CHECK (json_valid("values")),
  submitted_at TEXT NOT NULL
) STRICT;
CREATE INDEX form_submissions_form ON form_submissions(form_id, submitted_at, id);
CREATE INDEX form_submissions_contact ON form_submissions(contact_id);
