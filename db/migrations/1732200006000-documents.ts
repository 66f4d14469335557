import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Documents1732200006000 implements MigrationInterface {
  name = 'Documents1732200006000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE document_batches (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        template_id uuid NOT NULL,
        format text NOT NULL,
        status text NOT NULL DEFAULT 'processing',
        total_jobs integer NOT NULL,
        metadata jsonb,
        api_key_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX document_batches_project_idx ON document_batches (project_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE document_jobs (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        batch_id uuid REFERENCES document_batches(id) ON DELETE CASCADE,
        batch_index integer,
        api_key_id uuid,
        user_id uuid,
        template_id uuid NOT NULL,
        template_version integer NOT NULL,
        format text NOT NULL CHECK (format IN ('pdf','excel')),
        status text NOT NULL CHECK (status IN ('queued','processing','completed','failed','cancelled')),
        variables jsonb NOT NULL,
        metadata jsonb,
        filename text,
        billing text NOT NULL CHECK (billing IN ('free','credit')),
        attempts integer NOT NULL DEFAULT 0,
        artefact_key text,
        artefact_size integer,
        artefact_expired_at timestamptz,
        error_code text,
        error_message text,
        retry_of uuid,
        generation_ms integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX document_jobs_project_idx ON document_jobs (project_id, created_at DESC, id)`);
    await q.query(`CREATE INDEX document_jobs_project_status_idx ON document_jobs (project_id, status)`);
    await q.query(`CREATE INDEX document_jobs_batch_idx ON document_jobs (batch_id, batch_index)`);
    await q.query(`CREATE INDEX document_jobs_template_idx ON document_jobs (template_id, created_at)`);
    await q.query(`CREATE INDEX document_jobs_open_idx ON document_jobs (created_at) WHERE status IN ('queued','processing')`);
    await q.query(`CREATE INDEX document_jobs_retention_idx ON document_jobs (completed_at) WHERE artefact_key IS NOT NULL AND artefact_expired_at IS NULL`);

    // Free documents used per project and calendar month (UTC): a counter reserved atomically,
    // so concurrent requests cannot overspend the quota.
    await q.query(`
      CREATE TABLE document_quota_usage (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        month text NOT NULL,
        free_used integer NOT NULL DEFAULT 0,
        PRIMARY KEY (project_id, month)
      )`);

    // Credits: a balance spent by conditional UPDATE, and a ledger explaining every change.
    await q.query(`
      CREATE TABLE credit_balances (
        project_id uuid PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
        balance integer NOT NULL DEFAULT 0 CHECK (balance >= 0)
      )`);
    await q.query(`
      CREATE TABLE credit_ledger (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        delta integer NOT NULL,
        reason text NOT NULL,
        job_id uuid,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX credit_ledger_project_idx ON credit_ledger (project_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['credit_ledger', 'credit_balances', 'document_quota_usage', 'document_jobs', 'document_batches']) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
