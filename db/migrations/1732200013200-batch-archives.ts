import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A batch's archive: one ZIP or one merged PDF of its documents (docs/documents.md "Batch archives"). */
export class BatchArchives1732200013200 implements MigrationInterface {
  name = 'BatchArchives1732200013200';

  async up(_q: QueryRunner): Promise<void> {
    // Filled in by the batch archive work.
  }

  async down(_q: QueryRunner): Promise<void> {}
}
