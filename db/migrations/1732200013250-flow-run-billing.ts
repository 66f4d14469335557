import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a Flow run's native render cost (docs/documents.md "Quotas and the watermark on every
 * output"): one of the project's free documents (`free`, watermarked) or one credit (`credit`),
 * charged when the run is accepted (or when it renders, if the gate started rendering since), and
 * given back when the run ends without its document. Runs from before have none.
 */
export class FlowRunBilling1732200013250 implements MigrationInterface {
  name = 'FlowRunBilling1732200013250';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE flow_runs ADD COLUMN billing text CHECK (billing IN ('free','credit'))`);
    await q.query(`ALTER TABLE flow_runs ADD COLUMN documents_charged integer NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE flow_runs ADD COLUMN charged_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE flow_runs DROP COLUMN IF EXISTS charged_at`);
    await q.query(`ALTER TABLE flow_runs DROP COLUMN IF EXISTS documents_charged`);
    await q.query(`ALTER TABLE flow_runs DROP COLUMN IF EXISTS billing`);
  }
}
