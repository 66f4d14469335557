import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Assets: the images and fonts a project's templates use (docs/templates.md "Assets and fonts").
 * The bytes live in the row: they are small (a few MB at most, a capped total per project), go
 * with the project when it is deleted, and are read by the render workers with the template.
 * `sha256` lets an import find an asset the project already holds instead of storing it twice.
 */
export class TemplateAssets1732200011900 implements MigrationInterface {
  name = 'TemplateAssets1732200011900';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE template_assets (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('image', 'font')),
        name text NOT NULL,
        media_type text NOT NULL,
        size_bytes integer NOT NULL,
        sha256 text NOT NULL,
        width integer,
        height integer,
        font_family text,
        font_weight integer,
        font_style text,
        content bytea NOT NULL,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX template_assets_project_idx ON template_assets (project_id, created_at DESC)`);
    await q.query(`CREATE INDEX template_assets_project_sha_idx ON template_assets (project_id, sha256)`);
    await q.query(`CREATE INDEX template_assets_project_family_idx ON template_assets (project_id, lower(font_family)) WHERE kind = 'font'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS template_assets`);
  }
}
