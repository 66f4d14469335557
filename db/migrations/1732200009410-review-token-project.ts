import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A review session belongs to the project whose magic link started it and opens only that
 * project's approvals of its e-mail (docs/security.md, "Approvals"). Sessions from before carry no
 * project: they end (the approver opens the e-mailed link again; the link works until it expires).
 */
export class ReviewTokenProject1732200009410 implements MigrationInterface {
  name = 'ReviewTokenProject1732200009410';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM flow_review_tokens`);
    await q.query(`ALTER TABLE flow_review_tokens ADD COLUMN project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE`);
    await q.query(`DROP INDEX IF EXISTS flow_review_tokens_email_idx`);
    await q.query(`CREATE INDEX flow_review_tokens_email_idx ON flow_review_tokens (email, project_id) WHERE revoked_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS flow_review_tokens_email_idx`);
    await q.query(`ALTER TABLE flow_review_tokens DROP COLUMN project_id`);
    await q.query(`CREATE INDEX flow_review_tokens_email_idx ON flow_review_tokens (email) WHERE revoked_at IS NULL`);
  }
}
