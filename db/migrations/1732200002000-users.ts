import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Two-factor backup codes, TOTP replay protection and the reason given for deleting an account. */
export class Users1732200002000 implements MigrationInterface {
  name = 'Users1732200002000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE users
        ADD COLUMN deletion_reason text,
        ADD COLUMN deletion_reason_text text,
        -- Last TOTP time step accepted: a code, once used, cannot be replayed within its window.
        ADD COLUMN two_factor_last_step bigint`);

    await q.query(`
      CREATE TABLE backup_codes (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        -- SHA-256 of the normalised code: codes carry 50 random bits, so a fast hash is enough.
        code_hash text NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX backup_codes_user_hash_key ON backup_codes (user_id, code_hash)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS backup_codes`);
    await q.query(`ALTER TABLE users DROP COLUMN IF EXISTS deletion_reason, DROP COLUMN IF EXISTS deletion_reason_text, DROP COLUMN IF EXISTS two_factor_last_step`);
  }
}
