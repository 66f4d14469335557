import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Templates (an editable draft each) and their published, immutable versions (contract §3). */
export class Templates1732200003000 implements MigrationInterface {
  name = 'Templates1732200003000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE templates (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL,
        slug text NOT NULL,
        name text NOT NULL,
        description text,
        output_formats text[] NOT NULL,
        -- The spec has no folder resource: a folder is a label the dashboard groups by.
        folder_id text,
        -- The TemplateDefinition being edited; generation never reads it (it reads template_versions).
        draft jsonb NOT NULL,
        is_published boolean NOT NULL DEFAULT false,
        published_at timestamptz,
        latest_version integer NOT NULL DEFAULT 0,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX templates_short_id_key ON templates (short_id)`);
    // Slugs and names are unique among a project's live templates only: deleting "Invoice" frees
    // both for a new template, while the deleted row keeps its own for the history.
    await q.query(`CREATE UNIQUE INDEX templates_project_slug_key ON templates (project_id, slug) WHERE deleted_at IS NULL`);
    await q.query(`CREATE UNIQUE INDEX templates_project_name_key ON templates (project_id, lower(name)) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX templates_project_updated_idx ON templates (project_id, updated_at DESC) WHERE deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE template_versions (
        id uuid PRIMARY KEY,
        template_id uuid NOT NULL REFERENCES templates(id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        definition jsonb NOT NULL,
        name text NOT NULL,
        description text,
        output_formats text[] NOT NULL,
        release_notes text,
        published_at timestamptz NOT NULL DEFAULT now(),
        -- Kept when the publisher's account is purged; the version then shows no publisher.
        published_by uuid REFERENCES users(id) ON DELETE SET NULL,
        UNIQUE (template_id, version)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS template_versions`);
    await q.query(`DROP TABLE IF EXISTS templates`);
  }
}
