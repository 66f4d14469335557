import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys and OAuth clients gain the `read_runs` flag (issue 29; docs/security.md, "Permissions"):
 * reading a Flow run's payload needs it. Every key, client and access token made before it could
 * read every payload, so each gets `read_runs: true` and keeps working as it did; new ones get it
 * only when asked for. `manage_gates` is not touched: keys made before keep what they have (the
 * default for new keys changed in code, domain/identity/api-keys.ts). A row that already says
 * something about the flag keeps what it says.
 */
export class ApiKeyReadRuns1732200011629 implements MigrationInterface {
  name = 'ApiKeyReadRuns1732200011629';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['api_keys', 'oauth_clients', 'oauth_tokens']) {
      await q.query(`UPDATE ${table} SET permissions = permissions || '{"read_runs": true}'::jsonb WHERE NOT (permissions ? 'read_runs')`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['api_keys', 'oauth_clients', 'oauth_tokens']) {
      await q.query(`UPDATE ${table} SET permissions = permissions - 'read_runs'`);
    }
  }
}
