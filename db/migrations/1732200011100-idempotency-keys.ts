import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys (docs/idempotency.md): one row per (project, key), the request's fingerprint, a
 * lease while the first request is in flight, and its answer (sealed: an API key's or webhook's
 * secret can be in it) once it completed. Rows expire after 24 h; the expiry index serves the sweep.
 * `id` is what the re-encryption of secrets at rest pages by (db/secrets-at-rest.ts).
 */
export class IdempotencyKeys1732200011100 implements MigrationInterface {
  name = 'IdempotencyKeys1732200011100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        id uuid NOT NULL UNIQUE,
        key varchar(255) NOT NULL,
        fingerprint char(64) NOT NULL,
        method varchar(10) NOT NULL,
        path text NOT NULL,
        state varchar(16) NOT NULL CHECK (state IN ('in_flight', 'completed')),
        lease_token uuid NOT NULL,
        lease_until timestamptz NOT NULL,
        response text,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (project_id, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS idempotency_keys`);
  }
}
