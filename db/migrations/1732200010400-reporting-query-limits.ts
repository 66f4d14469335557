import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A query's `maxRows` and `timeoutSeconds` are bounded by REPORTING_MAX_ROWS and
 * REPORTING_QUERY_TIMEOUT_SECONDS (checked by the service, api/reporting/limits.ts), not by the
 * defaults the first migration wrote into CHECK constraints: a deployment that raises a setting
 * could otherwise not store the queries it allows.
 */
export class ReportingQueryLimits1732200010400 implements MigrationInterface {
  name = 'ReportingQueryLimits1732200010400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting_queries DROP CONSTRAINT IF EXISTS reporting_queries_max_rows_check`);
    await q.query(`ALTER TABLE reporting_queries DROP CONSTRAINT IF EXISTS reporting_queries_timeout_seconds_check`);
    await q.query(`ALTER TABLE reporting_queries ADD CONSTRAINT reporting_queries_max_rows_check CHECK (max_rows >= 1)`);
    await q.query(`ALTER TABLE reporting_queries ADD CONSTRAINT reporting_queries_timeout_seconds_check CHECK (timeout_seconds >= 1)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting_queries DROP CONSTRAINT IF EXISTS reporting_queries_max_rows_check`);
    await q.query(`ALTER TABLE reporting_queries DROP CONSTRAINT IF EXISTS reporting_queries_timeout_seconds_check`);
    await q.query(`ALTER TABLE reporting_queries ADD CONSTRAINT reporting_queries_max_rows_check CHECK (max_rows BETWEEN 1 AND 100000)`);
    await q.query(`ALTER TABLE reporting_queries ADD CONSTRAINT reporting_queries_timeout_seconds_check CHECK (timeout_seconds BETWEEN 1 AND 300)`);
  }
}
