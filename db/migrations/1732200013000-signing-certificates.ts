import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A project's signing certificates (POST /api/signing-certificates; docs/documents.md "Signatures"). */
export class SigningCertificates1732200013000 implements MigrationInterface {
  name = 'SigningCertificates1732200013000';

  async up(_q: QueryRunner): Promise<void> {
    // Filled in by the signatures work.
  }

  async down(_q: QueryRunner): Promise<void> {}
}
