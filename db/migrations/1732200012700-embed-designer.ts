import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The designer in another site's page (docs/embedding.md): the origins a project lets embed it, the
 * embed tokens (stored as their SHA-256 only, each scoped to one template, a mode and one origin),
 * and the API key and OAuth client flag `embed_designer` that lets a key mint them (false for every
 * key and client made before it).
 */
export class EmbedDesigner1732200012700 implements MigrationInterface {
  name = 'EmbedDesigner1732200012700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE projects ADD COLUMN embed_origins text[] NOT NULL DEFAULT '{}'`);
    await q.query(`
      CREATE TABLE embed_tokens (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        template_id uuid NOT NULL REFERENCES templates(id) ON DELETE CASCADE,
        mode text NOT NULL CHECK (mode IN ('edit', 'view')),
        origin text NOT NULL,
        token_hash text NOT NULL UNIQUE,
        created_by_user uuid REFERENCES users(id) ON DELETE CASCADE,
        created_by_key uuid REFERENCES api_keys(id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX embed_tokens_expiry_idx ON embed_tokens (expires_at)`);
    await q.query(`UPDATE api_keys SET permissions = permissions || '{"embed_designer": false}'::jsonb WHERE NOT (permissions ? 'embed_designer')`);
    await q.query(`UPDATE oauth_clients SET permissions = permissions || '{"embed_designer": false}'::jsonb WHERE NOT (permissions ? 'embed_designer')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE oauth_clients SET permissions = permissions - 'embed_designer'`);
    await q.query(`UPDATE api_keys SET permissions = permissions - 'embed_designer'`);
    await q.query(`DROP TABLE embed_tokens`);
    await q.query(`ALTER TABLE projects DROP COLUMN embed_origins`);
  }
}
