import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A project's signing certificates (POST /api/signing-certificates; docs/documents.md "Signatures").
 * The PKCS#12 file (base64) and its password are sealed at rest (db/secret-columns.ts sealedText,
 * listed in db/secrets-at-rest.ts SECRET_COLUMNS so key rotation re-seals them); what answers show
 * (subject, issuer, serial, validity, fingerprint) is read from the certificate once, at upload.
 */
export class SigningCertificates1732200013000 implements MigrationInterface {
  name = 'SigningCertificates1732200013000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE signing_certificates (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        subject text NOT NULL,
        issuer text NOT NULL,
        serial_number text NOT NULL,
        not_before timestamptz NOT NULL,
        not_after timestamptz NOT NULL,
        fingerprint_sha256 text NOT NULL,
        p12 text NOT NULL,
        password text NOT NULL,
        timestamp_url text,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX signing_certificates_project_idx ON signing_certificates (project_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS signing_certificates`);
  }
}
