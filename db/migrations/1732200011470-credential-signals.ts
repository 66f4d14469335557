import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Credential changes notify `formwork_credentials` (docs/performance.md, "Request path"): every API
 * process caches the credentials it resolved for a few seconds (api/identity/credential-cache.ts)
 * and evicts an entry the moment the row behind it changes, from whichever process or script wrote
 * it. The payload names what changed:
 * - `key:<id>`           an API key switched off or on, re-scoped, expired differently, deleted;
 * - `user:<id>`          an account's deletion state changed, or the account is gone;
 * - `member:<p>:<u>`     a membership ended or changed (role included);
 * - `project:<id>`       a project deleted (soft or hard);
 * - `oauth-client:<id>`  an OAuth client switched off, re-scoped, rotated or deleted, or one of its tokens deleted;
 * - `session:<family>`   a refresh-token family revoked (logout, password change, 2FA, deletion).
 * Counters (usage, last login) are left out: they do not decide access and change on every call.
 */
export class CredentialSignals1732200011470 implements MigrationInterface {
  name = 'CredentialSignals1732200011470';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION formwork_credential_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- OLD in both cases: an update is announced under the identity the caches hold.
        CASE TG_TABLE_NAME
          WHEN 'api_keys' THEN PERFORM pg_notify('formwork_credentials', 'key:' || OLD.id::text);
          WHEN 'users' THEN PERFORM pg_notify('formwork_credentials', 'user:' || OLD.id::text);
          WHEN 'memberships' THEN PERFORM pg_notify('formwork_credentials', 'member:' || OLD.project_id::text || ':' || OLD.user_id::text);
          WHEN 'projects' THEN PERFORM pg_notify('formwork_credentials', 'project:' || OLD.id::text);
          WHEN 'oauth_clients' THEN PERFORM pg_notify('formwork_credentials', 'oauth-client:' || OLD.id::text);
          WHEN 'oauth_tokens' THEN PERFORM pg_notify('formwork_credentials', 'oauth-client:' || OLD.client_id::text);
          WHEN 'refresh_tokens' THEN PERFORM pg_notify('formwork_credentials', 'session:' || OLD.family_id::text);
        END CASE;
        RETURN NULL;
      END $$`);
    const triggers: Array<[table: string, events: string]> = [
      ['api_keys', 'UPDATE OF is_active, permissions, expires_at, key_hash, project_id, created_by OR DELETE'],
      ['users', 'UPDATE OF deletion_status OR DELETE'],
      ['memberships', 'UPDATE OR DELETE'],
      ['projects', 'UPDATE OF deleted_at OR DELETE'],
      ['oauth_clients', 'UPDATE OF is_active, permissions, project_id, created_by, secret_hash OR DELETE'],
      ['oauth_tokens', 'DELETE'],
      ['refresh_tokens', 'UPDATE OF revoked_at OR DELETE'],
    ];
    for (const [table, events] of triggers) {
      await q.query(`CREATE TRIGGER ${table}_credential_notify AFTER ${events} ON ${table} FOR EACH ROW EXECUTE FUNCTION formwork_credential_notify()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['api_keys', 'users', 'memberships', 'projects', 'oauth_clients', 'oauth_tokens', 'refresh_tokens']) {
      await q.query(`DROP TRIGGER IF EXISTS ${table}_credential_notify ON ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS formwork_credential_notify()`);
  }
}
