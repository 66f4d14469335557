import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A template's sample data (docs/templates.md "Checks, automation fields, analytics"): the variables its editors
 * preview with, kept beside the definition (not part of it: publishing, versions and generation never read it).
 */
export class TemplateSampleData1732200012000 implements MigrationInterface {
  name = 'TemplateSampleData1732200012000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE templates ADD COLUMN sample_data jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE templates DROP COLUMN sample_data`);
  }
}
