import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys gain the `manage_gates` flag (docs/security.md, "Permissions"). Every key made before
 * it had full Flow access, so every existing key gets `manage_gates: true` and keeps working as it
 * did. A key that already says something about the flag keeps what it says.
 */
export class ApiKeyManageGates1732200009400 implements MigrationInterface {
  name = 'ApiKeyManageGates1732200009400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE api_keys SET permissions = permissions || '{"manage_gates": true}'::jsonb WHERE NOT (permissions ? 'manage_gates')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE api_keys SET permissions = permissions - 'manage_gates'`);
  }
}
