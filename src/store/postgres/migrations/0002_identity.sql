-- Identity sections on PostgreSQL (identity capability). On SQLite they are
-- Markdown files in the service home; several servers over one database each
-- have a home of their own, so here the sections live in the database and an
-- edit through one server is what every server reads. scope is '' for the
-- global sections, else the agent id (agent ids are never empty).
CREATE TABLE __SCHEMA__.identity_sections (
  scope TEXT NOT NULL,
  name TEXT NOT NULL,
  body TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (scope, name)
);
