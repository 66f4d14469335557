import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Document webhook subscriptions, and the delivery records that document events and Flow runs
 * share (contract §4, §5): one row per event and target, its attempts kept on the row.
 */
export class Webhooks1732200005000 implements MigrationInterface {
  name = 'Webhooks1732200005000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_subscriptions (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        url text NOT NULL,
        events text[] NOT NULL,
        description text,
        -- Plain text, unlike API keys: the service must sign with it, so a hash would not do.
        secret text NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        -- The user (JWT) or the API key that created it; the other is NULL.
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_by_api_key_id uuid REFERENCES api_keys(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        -- Soft delete: the delivery history of a deleted subscription stays for the operator.
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX webhook_subscriptions_project_idx ON webhook_subscriptions (project_id, created_at) WHERE deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        source text NOT NULL CHECK (source IN ('document','flow')),
        subscription_id uuid REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
        -- Flow's run id; text, so this table does not depend on how the Flow tables spell ids.
        run_id text,
        url text NOT NULL,
        -- Flow channels carry their own secret and extra headers; document deliveries use the
        -- subscription's secret, read at each attempt.
        secret text,
        headers jsonb,
        event_id text NOT NULL,
        event_type text NOT NULL,
        -- json, not jsonb: json keeps the text as given (key order, spacing), so every attempt
        -- sends, and signs, exactly the envelope that was recorded.
        payload json NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','delivering','completed','failed')),
        -- Contract §5 attempts, [{number, at, statusCode, error, durationMs}], appended atomically.
        attempts jsonb NOT NULL DEFAULT '[]',
        next_attempt_at timestamptz,
        -- Manual retries so far: numbers the workflow id of each one (webhook-delivery-<id>-retry-<n>).
        manual_retries integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        completed_at timestamptz,
        CHECK ((source = 'document') = (subscription_id IS NOT NULL)),
        CHECK (source <> 'flow' OR run_id IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX webhook_deliveries_run_idx ON webhook_deliveries (run_id, created_at) WHERE run_id IS NOT NULL`);
    await q.query(`CREATE INDEX webhook_deliveries_project_idx ON webhook_deliveries (project_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS webhook_deliveries`);
    await q.query(`DROP TABLE IF EXISTS webhook_subscriptions`);
  }
}
