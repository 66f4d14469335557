import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reporting agents and their tasks (docs/reporting.md "Agents", "Why agents speak HTTPS, not Temporal",
 * "The agent protocol"). An agent holds only the SHA-256 of its `fmag_` token. A task is one unit of work an agent
 * leases through the long poll; a Temporal attempt owns at most one row (unique workflow/activity/attempt), so a
 * re-executed attempt finds its row again. Payloads hold the statement and limits, never secrets.
 */
export class ReportingAgents1732200010900 implements MigrationInterface {
  name = 'ReportingAgents1732200010900';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_agents (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        name text NOT NULL,
        description text,
        is_active boolean NOT NULL DEFAULT true,
        token_hash text NOT NULL UNIQUE,
        token_prefix text NOT NULL,
        public_key text,
        last_seen_at timestamptz,
        session jsonb,
        load jsonb,
        pools jsonb NOT NULL DEFAULT '[]',
        recent_errors jsonb NOT NULL DEFAULT '[]',
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX reporting_agents_name_idx ON reporting_agents (project_id, lower(name))`);
    await q.query(`CREATE INDEX reporting_agents_project_idx ON reporting_agents (project_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE reporting_agent_tasks (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL UNIQUE,
        agent_id uuid NOT NULL REFERENCES reporting_agents(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('query','test','schema','preview')),
        datasource_id uuid NOT NULL,
        run_id uuid,
        workflow_id text,
        activity_id text,
        attempt integer NOT NULL DEFAULT 1,
        payload jsonb NOT NULL DEFAULT '{}',
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued','leased','completed','failed','cancel_requested','cancelled','expired')),
        session_id uuid,
        leased_at timestamptz,
        lease_expires_at timestamptz,
        completed_at timestamptz,
        result jsonb,
        result_key text,
        error jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX reporting_agent_tasks_attempt_idx ON reporting_agent_tasks (workflow_id, activity_id, attempt) WHERE workflow_id IS NOT NULL`);
    // The long poll's probe: the oldest queued task of one agent.
    await q.query(`CREATE INDEX reporting_agent_tasks_queue_idx ON reporting_agent_tasks (agent_id, created_at, id) WHERE status = 'queued'`);
    await q.query(`CREATE INDEX reporting_agent_tasks_agent_idx ON reporting_agent_tasks (project_id, agent_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS reporting_agent_tasks`);
    await q.query(`DROP TABLE IF EXISTS reporting_agents`);
  }
}
