import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys gain the reporting flags `read_reports` and `run_reports` (docs/identity.md,
 * "Permissions"). They default to false, also for every key made before them: reports reach
 * business databases, so a key gets them only when someone grants them. A key that already says
 * something about a flag keeps what it says.
 */
export class ApiKeyReportingFlags1732200010050 implements MigrationInterface {
  name = 'ApiKeyReportingFlags1732200010050';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE api_keys SET permissions = permissions || '{"read_reports": false}'::jsonb WHERE NOT (permissions ? 'read_reports')`);
    await q.query(`UPDATE api_keys SET permissions = permissions || '{"run_reports": false}'::jsonb WHERE NOT (permissions ? 'run_reports')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE api_keys SET permissions = permissions - 'read_reports' - 'run_reports'`);
  }
}
