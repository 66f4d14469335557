import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { openDatabase } from '../../db/data-source';
import { DocumentJobEntity } from '../../db/documents/document-job.entity';
import type { JobStatus } from '../../domain/documents/job-status';
import type { ApprovalStatus } from '../../domain/flow/approval-status';
import type { RunStatus } from '../../domain/flow/run-status';
import { createTestDatabase } from './database';

/**
 * Rows in a given status for the tests of the state owners (db/flow/run-state.ts, approval-state.ts,
 * db/documents/job-state.ts, batch-state.ts): a database of the file's own with the migrations,
 * one workspace and one gate, and rows inserted directly in whatever status a test needs.
 */

export interface StateDb {
  db: DataSource;
  projectId: string;
  gateId: string;
  close(): Promise<void>;
}

export async function openStateDb(): Promise<StateDb> {
  const database = await createTestDatabase();
  const db = await openDatabase(database.url, 2);
  const userId = randomUUID();
  const projectId = randomUUID();
  const gateId = randomUUID();
  const tag = randomBytes(4).toString('hex');
  await db.query(`INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, 'Owner', 'x')`, [userId, `owner-${tag}@example.com`]);
  await db.query(`INSERT INTO projects (id, name, slug, owner_id) VALUES ($1, 'States', $2, $3)`, [projectId, `states-${tag}`, userId]);
  await db.query(`INSERT INTO flow_gates (id, project_id, short_id, slug, name) VALUES ($1, $2, $3, $4, 'Gate')`, [gateId, projectId, `fgat_${tag}`, `gate-${tag}`]);
  return {
    db,
    projectId,
    gateId,
    close: async () => {
      await db.destroy();
      await database.drop();
    },
  };
}

/** Every column of one row, to show that a refused move left it exactly as it was. */
export async function rowOf(db: DataSource, table: 'flow_runs' | 'flow_approvals' | 'document_jobs' | 'document_batches', id: string): Promise<Record<string, unknown>> {
  const [row] = await db.query(`SELECT * FROM ${table} WHERE id = $1`, [id]);
  return row;
}

export async function runIn(s: StateDb, status: RunStatus, fields: { deliveryStatus?: string } = {}): Promise<string> {
  const id = randomUUID();
  await s.db.query(
    `INSERT INTO flow_runs (id, short_id, gate_id, project_id, schema_version, status, source, input_payload, validation, delivery_status, workflow_pending)
     VALUES ($1, $2, $3, $4, 1, $5, 'rest', '{}', '{"valid": true}', $6, true)`,
    [id, `frun_${randomBytes(8).toString('hex')}`, s.gateId, s.projectId, status, fields.deliveryStatus ?? null],
  );
  return id;
}

export async function approvalIn(s: StateDb, runId: string, status: ApprovalStatus, email = `approver-${randomBytes(4).toString('hex')}@example.com`): Promise<string> {
  const id = randomUUID();
  await s.db.query(
    `INSERT INTO flow_approvals (id, run_id, gate_id, project_id, approver_email, status, magic_token_hash, magic_token_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + interval '1 hour')`,
    [id, runId, s.gateId, s.projectId, email, status, randomBytes(16).toString('hex')],
  );
  return id;
}

export async function jobIn(s: StateDb, status: JobStatus, fields: { batchId?: string } = {}): Promise<DocumentJobEntity> {
  const id = randomUUID();
  await s.db.query(
    `INSERT INTO document_jobs (id, project_id, template_id, template_version, format, status, variables, billing, batch_id)
     VALUES ($1, $2, $3, 1, 'pdf', $4, '{}', 'credit', $5)`,
    [id, s.projectId, randomUUID(), status, fields.batchId ?? null],
  );
  return s.db.getRepository(DocumentJobEntity).findOneByOrFail({ id });
}
