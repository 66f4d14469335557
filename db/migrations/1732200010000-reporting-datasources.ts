import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reporting datasources (docs/reporting.md "Datasources"). Secrets are a jsonb map of
 * `{value: "enc:v1:…", updatedAt}`, sealed by the entity's column transformer; the row never holds
 * a password in plaintext. `agent_id` stays without a foreign key until the agents table exists.
 */
export class ReportingDatasources1732200010000 implements MigrationInterface {
  name = 'ReportingDatasources1732200010000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_datasources (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        name text NOT NULL,
        description text,
        kind text NOT NULL CHECK (kind IN ('postgres','mysql','sqlite','http_json','csv')),
        connection_mode text NOT NULL DEFAULT 'direct' CHECK (connection_mode IN ('direct','agent')),
        agent_id uuid,
        config jsonb NOT NULL DEFAULT '{}',
        secrets jsonb NOT NULL DEFAULT '{}',
        secret_mode text NOT NULL DEFAULT 'stored' CHECK (secret_mode IN ('stored','sealed','agent_local')),
        pool jsonb NOT NULL,
        defaults jsonb NOT NULL,
        last_test jsonb,
        schema jsonb,
        schema_refreshed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((connection_mode = 'agent') = (agent_id IS NOT NULL))
      )`);
    await q.query(`CREATE UNIQUE INDEX reporting_datasources_name_idx ON reporting_datasources (project_id, lower(name))`);
    await q.query(`CREATE INDEX reporting_datasources_project_idx ON reporting_datasources (project_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reporting_datasources`);
  }
}
