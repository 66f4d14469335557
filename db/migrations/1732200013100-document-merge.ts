import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Merged documents (POST /api/documents/merge) and batch archives (docs/documents.md "Merging" and "Batch archives"). */
export class DocumentMerge1732200013100 implements MigrationInterface {
  name = 'DocumentMerge1732200013100';

  async up(_q: QueryRunner): Promise<void> {
    // Filled in by the merge and archive work.
  }

  async down(_q: QueryRunner): Promise<void> {}
}
