import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reporting query objects and their versions (docs/reporting.md "Query objects"): a
 * draft per query and immutable versions, like templates. Deleted queries keep their row (and
 * versions) with `deleted_at`; names and slugs are unique among a project's live queries only.
 * `datasource_id` has no foreign key: deleting a datasource a live query uses will answer 409
 * ERR_DS_004 in the service, and deleted queries must not hold the datasource back.
 */
export class ReportingQueries1732200010100 implements MigrationInterface {
  name = 'ReportingQueries1732200010100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_queries (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        slug text NOT NULL,
        name text NOT NULL,
        description text,
        folder_id text,
        datasource_id uuid NOT NULL,
        language text NOT NULL CHECK (language IN ('sql','http','table')),
        text text NOT NULL DEFAULT '',
        parameters jsonb NOT NULL DEFAULT '[]',
        expected_columns jsonb,
        max_rows integer NOT NULL CHECK (max_rows BETWEEN 1 AND 100000),
        timeout_seconds integer NOT NULL CHECK (timeout_seconds BETWEEN 1 AND 300),
        on_row_limit text NOT NULL DEFAULT 'fail' CHECK (on_row_limit IN ('fail','truncate')),
        is_published boolean NOT NULL DEFAULT false,
        latest_version integer NOT NULL DEFAULT 0,
        published_at timestamptz,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX reporting_queries_slug_idx ON reporting_queries (project_id, slug) WHERE deleted_at IS NULL`);
    await q.query(`CREATE UNIQUE INDEX reporting_queries_name_idx ON reporting_queries (project_id, lower(name)) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX reporting_queries_project_idx ON reporting_queries (project_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX reporting_queries_datasource_idx ON reporting_queries (datasource_id) WHERE deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE reporting_query_versions (
        id uuid PRIMARY KEY,
        query_id uuid NOT NULL REFERENCES reporting_queries(id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        definition jsonb NOT NULL,
        datasource_id uuid NOT NULL,
        release_notes text,
        published_at timestamptz NOT NULL DEFAULT now(),
        -- Kept when the publisher's account is purged; the version then shows no publisher.
        published_by uuid REFERENCES users(id) ON DELETE SET NULL,
        UNIQUE (query_id, version)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS reporting_query_versions`);
    await q.query(`DROP TABLE IF EXISTS reporting_queries`);
  }
}
