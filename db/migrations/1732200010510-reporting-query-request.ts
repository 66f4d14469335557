import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `http` and `table` query languages (docs/reporting.md "http_json", "csv"): a
 * query draft's request spec (`http`) and optional JSONata `transform`. Versions keep both in
 * their `definition` jsonb; SQL queries have neither (null).
 */
export class ReportingQueryRequest1732200010510 implements MigrationInterface {
  name = 'ReportingQueryRequest1732200010510';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting_queries ADD COLUMN request jsonb, ADD COLUMN transform text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting_queries DROP COLUMN request, DROP COLUMN transform`);
  }
}
