import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Flow run lifecycle (issue 7, core half): when a run's artefact was stored and when retention
 * removed it (then `artefactUrl` is null), and an index for the retention sweep.
 */
export class FlowLifecycle1732200008000 implements MigrationInterface {
  name = 'FlowLifecycle1732200008000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE flow_runs ADD COLUMN artefact_stored_at timestamptz, ADD COLUMN artefact_expired_at timestamptz`);
    await q.query(`CREATE INDEX flow_runs_artefact_retention_idx ON flow_runs (artefact_stored_at) WHERE artefact_key IS NOT NULL AND artefact_expired_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS flow_runs_artefact_retention_idx`);
    await q.query(`ALTER TABLE flow_runs DROP COLUMN IF EXISTS artefact_expired_at, DROP COLUMN IF EXISTS artefact_stored_at`);
  }
}
