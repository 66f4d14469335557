import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Access tokens end with their session (docs/security.md, "Credentials: sessions and
 * revocation"): every JWT call asks whether the token's refresh-token family still has an
 * unrevoked token. A family gains a revoked row at every rotation, so the plain family index
 * would walk all of them; this partial index holds only the live rows, one probe per call.
 */
export class Sessions1732200009200 implements MigrationInterface {
  name = 'Sessions1732200009200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX refresh_tokens_live_family_idx ON refresh_tokens (family_id) WHERE revoked_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS refresh_tokens_live_family_idx`);
  }
}
