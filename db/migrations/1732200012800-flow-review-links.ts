import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every magic link minted for an approval, by its hash only (docs/flow.md "Review page"): so the
 * reviewer's page can say what became of an old link (used, replaced by a newer one, its approval
 * decided or its window over) and re-send from it while the approval is still pending. A link is
 * used once: exchanging it for a review session marks it (`used_at`).
 */
export class FlowReviewLinks1732200012800 implements MigrationInterface {
  name = 'FlowReviewLinks1732200012800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE flow_review_links (
        token_hash text PRIMARY KEY,
        approval_id uuid NOT NULL REFERENCES flow_approvals(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        used_at timestamptz
      )`);
    await q.query(`CREATE INDEX flow_review_links_approval_idx ON flow_review_links (approval_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS flow_review_links`);
  }
}
