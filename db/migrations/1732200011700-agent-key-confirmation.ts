import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An agent's public key must be confirmed by an admin before anything is sealed to it or any task
 * is leased to the agent (issue 29; docs/agent.md "Confirming the key"): whoever holds the token
 * could otherwise pin a key of their own before the real agent's first session. Keys sent before
 * this migration were accepted as they came and stay in use: they count as confirmed (`key_confirmed_by`
 * stays empty, as no person confirmed them).
 */
export class AgentKeyConfirmation1732200011700 implements MigrationInterface {
  name = 'AgentKeyConfirmation1732200011700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting_agents ADD COLUMN key_confirmed_at timestamptz, ADD COLUMN key_confirmed_by uuid REFERENCES users(id) ON DELETE SET NULL`);
    await q.query(`UPDATE reporting_agents SET key_confirmed_at = now() WHERE public_key IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reporting_agents DROP COLUMN key_confirmed_by, DROP COLUMN key_confirmed_at`);
  }
}
