import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';

/**
 * Rows the API cannot produce quickly (old runs, decided approvals, delivery attempts), inserted
 * directly for the Flow analytics tests. Times are given as milliseconds before now.
 */

const ago = (ms: number) => new Date(Date.now() - ms);
export const DAY = 86_400_000;

export interface RunRow {
  projectId: string;
  gateId: string;
  status: string;
  source?: 'rest' | 'mcp';
  agoMs?: number;
  /** Time from creation to completion; completed_at stays null when omitted. */
  durationMs?: number;
  error?: string;
  validation?: Record<string, unknown>;
}

export async function insertRun(db: DataSource, r: RunRow): Promise<string> {
  const id = randomUUID();
  const created = ago(r.agoMs ?? 0);
  const completed = r.durationMs === undefined ? null : new Date(created.getTime() + r.durationMs);
  await db.query(
    `INSERT INTO flow_runs (id, short_id, gate_id, project_id, schema_version, status, source, input_payload, validation, error, created_at, updated_at, completed_at)
     VALUES ($1, $2, $3, $4, 1, $5, $6, '{}', $7, $8, $9, $9, $10)`,
    [id, `frun_${randomBytes(8).toString('hex')}`, r.gateId, r.projectId, r.status, r.source ?? 'rest', JSON.stringify(r.validation ?? { valid: true, details: [] }), r.error ?? null, created, completed],
  );
  return id;
}

export async function insertApproval(db: DataSource, a: { runId: string; gateId: string; projectId: string; status: string; decisionMs?: number; agoMs?: number }): Promise<void> {
  const created = ago(a.agoMs ?? 60_000);
  const decided = a.decisionMs === undefined ? null : new Date(created.getTime() + a.decisionMs);
  await db.query(
    `INSERT INTO flow_approvals (id, run_id, gate_id, project_id, approver_email, status, decided_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [randomUUID(), a.runId, a.gateId, a.projectId, `approver-${randomBytes(4).toString('hex')}@example.com`, a.status, decided, created],
  );
}

export async function insertDelivery(db: DataSource, d: { runId: string; projectId: string; status: string; attempts: number }): Promise<void> {
  const attempts = Array.from({ length: d.attempts }, (_, i) => ({ number: i + 1, at: new Date().toISOString(), statusCode: 500, error: null, durationMs: 10 }));
  await db.query(
    `INSERT INTO webhook_deliveries (id, project_id, source, run_id, url, event_id, event_type, payload, status, attempts)
     VALUES ($1, $2, 'flow', $3, 'https://hooks.example.com/x', $4, 'flow.run.completed', '{}', $5, $6)`,
    [randomUUID(), d.projectId, d.runId, randomUUID(), d.status, JSON.stringify(attempts)],
  );
}

export async function insertDocumentJob(db: DataSource, projectId: string, agoMs: number): Promise<void> {
  await db.query(
    `INSERT INTO document_jobs (id, project_id, template_id, template_version, format, status, variables, billing, created_at)
     VALUES ($1, $2, $3, 1, 'pdf', 'completed', '{}', 'free', $4)`,
    [randomUUID(), projectId, randomUUID(), ago(agoMs)],
  );
}
