import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Flow gates, their schema versions and runs (docs/flow.md). Tables carry a `flow_` prefix: the
 * reporting area has runs of its own. The gate row also holds its circuit-breaker state, moved
 * only by atomic UPDATEs so every API replica and worker sees one truth.
 */
export class Flow1732200004000 implements MigrationInterface {
  name = 'Flow1732200004000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE flow_gates (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        short_id text NOT NULL,
        slug text NOT NULL,
        name text NOT NULL,
        description text,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','paused','archived')),
        validation_mode text NOT NULL DEFAULT 'variables' CHECK (validation_mode IN ('variables','freetext')),
        -- The current version's definition, copied from flow_gate_schema_versions for one-row reads.
        schema jsonb,
        business_rules jsonb NOT NULL DEFAULT '[]',
        freetext_config jsonb,
        schema_version integer NOT NULL DEFAULT 1,
        render_mode text NOT NULL DEFAULT 'none' CHECK (render_mode IN ('none','native','custom_api')),
        render_template_id text,
        render_config jsonb,
        approval_mode text NOT NULL DEFAULT 'auto' CHECK (approval_mode IN ('auto','manual')),
        approval_config jsonb,
        delivery_channels jsonb NOT NULL DEFAULT '[]',
        max_submissions_per_minute integer CHECK (max_submissions_per_minute BETWEEN 1 AND 1000),
        notification_mode text NOT NULL DEFAULT 'digest' CHECK (notification_mode IN ('immediate','digest')),
        notification_digest_minutes integer NOT NULL DEFAULT 5 CHECK (notification_digest_minutes BETWEEN 1 AND 60),
        circuit_breaker_enabled boolean NOT NULL DEFAULT true,
        max_failures integer NOT NULL DEFAULT 5 CHECK (max_failures >= 1),
        cooldown_seconds integer NOT NULL DEFAULT 300 CHECK (cooldown_seconds >= 60),
        circuit_state text NOT NULL DEFAULT 'closed' CHECK (circuit_state IN ('closed','open','half_open')),
        consecutive_failures integer NOT NULL DEFAULT 0,
        circuit_open_until timestamptz,
        circuit_trial_run_id uuid,
        circuit_trial_started_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX flow_gates_short_id_key ON flow_gates (short_id)`);
    // A deleted gate frees its slug for a new one.
    await q.query(`CREATE UNIQUE INDEX flow_gates_project_slug_key ON flow_gates (project_id, slug) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX flow_gates_project_created_idx ON flow_gates (project_id, created_at DESC) WHERE deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE flow_gate_schema_versions (
        gate_id uuid NOT NULL REFERENCES flow_gates(id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        validation_mode text NOT NULL,
        schema jsonb,
        business_rules jsonb NOT NULL DEFAULT '[]',
        freetext_config jsonb,
        -- create, schema (PUT /schema), import (from a template), settings (mode or freetext config changed)
        source text NOT NULL,
        source_template_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (gate_id, version)
      )`);

    await q.query(`
      CREATE TABLE flow_runs (
        id uuid PRIMARY KEY,
        short_id text NOT NULL,
        gate_id uuid NOT NULL REFERENCES flow_gates(id) ON DELETE CASCADE,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        schema_version integer NOT NULL,
        status text NOT NULL CHECK (status IN ('validation_failed','validated','rendering','review_required','approved','rejected','expired','delivering','completed','failed')),
        source text NOT NULL CHECK (source IN ('rest','mcp')),
        input_payload jsonb NOT NULL,
        validation jsonb NOT NULL,
        metadata jsonb,
        artefact_key text,
        approval_status text,
        delivery_status text,
        error text,
        -- Set when the run has render, approval or delivery to do and its workflow is not yet known
        -- to be started; cleared once it is. The sweeper starts whatever stays pending (docs/flow.md).
        workflow_pending boolean NOT NULL DEFAULT false,
        workflow_started_at timestamptz,
        -- When the run's render/delivery outcome reached the circuit breaker: counted once, even if reported twice.
        outcome_recorded_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX flow_runs_short_id_key ON flow_runs (short_id)`);
    // Listing (global and per gate, newest first, status filter) and the monthly run count.
    await q.query(`CREATE INDEX flow_runs_project_created_idx ON flow_runs (project_id, created_at DESC, id)`);
    await q.query(`CREATE INDEX flow_runs_gate_created_idx ON flow_runs (gate_id, created_at DESC, id)`);
    await q.query(`CREATE INDEX flow_runs_project_status_idx ON flow_runs (project_id, status, created_at DESC)`);
    await q.query(`CREATE INDEX flow_runs_workflow_pending_idx ON flow_runs (created_at) WHERE workflow_pending`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS flow_runs`);
    await q.query(`DROP TABLE IF EXISTS flow_gate_schema_versions`);
    await q.query(`DROP TABLE IF EXISTS flow_gates`);
  }
}
