import type { DataSource, EntityManager } from 'typeorm';
import { addCredits, releaseFreeDocuments, reserveFreeDocuments, spendCredits } from '../documents/billing';
import { modifyReturning, type Queryable } from '../sql';
import type { RunStatus } from '../../domain/flow/run-status';

/**
 * What a Flow run's native render costs (docs/documents.md "Quotas and the watermark on every
 * output"): one document, like POST /api/documents/generate, of the month's free quota (and the
 * document carries the FORMWORK FREE watermark) or, with the gate's `renderConfig.useCredit`, one
 * credit. Charged when the run is accepted (chargeRunAtSubmission, in the transaction that inserts
 * it) or, for a run accepted before its gate rendered, when it renders (chargeRunAtRender); given
 * back when the run ends without its document (refundRunDocument).
 */

/** Where a run ends; `failed` too (it may still become `completed` by a delivery retry, but its render is over). */
const ENDED: readonly RunStatus[] = ['failed', 'completed', 'rejected', 'expired'];

export interface RunCharge {
  projectId: string;
  useCredit: boolean;
  freeLimit: number;
  /** The ledger's reason names the run. */
  runShortId: string;
}

async function spend(m: Queryable, charge: RunCharge): Promise<'free' | 'credit'> {
  if (charge.useCredit) {
    await spendCredits(m, charge.projectId, 1, `flow run ${charge.runShortId}`);
    return 'credit';
  }
  await reserveFreeDocuments(m, charge.projectId, 1, charge.freeLimit);
  return 'free';
}

/** Spends the run's document before its row is inserted (same transaction): ERR_QUOTA_008 / ERR_QUOTA_011 refuse the submission. */
export async function chargeRunAtSubmission(m: EntityManager, charge: RunCharge): Promise<{ billing: 'free' | 'credit'; documentsCharged: number; chargedAt: Date }> {
  return { billing: await spend(m, charge), documentsCharged: 1, chargedAt: new Date() };
}

/**
 * A run about to render that was never charged (its gate began rendering after it was accepted, or
 * it was accepted before runs were charged) is charged now; a retried attempt finds the charge and
 * spends nothing. Answers the run's billing; a quota or credit error fails the render.
 */
export async function chargeRunAtRender(db: DataSource, runId: string, charge: RunCharge): Promise<'free' | 'credit'> {
  return db.transaction(async (m) => {
    const rows: Array<{ billing: 'free' | 'credit' | null }> = await m.query(`SELECT billing FROM flow_runs WHERE id = $1 FOR UPDATE`, [runId]);
    if (rows[0]?.billing) return rows[0].billing;
    const billing = await spend(m, charge);
    await m.query(`UPDATE flow_runs SET billing = $2, documents_charged = 1, charged_at = now() WHERE id = $1`, [runId, billing]);
    return billing;
  });
}

/**
 * Gives the document back to a run that ended (failed, or completed because its gate stopped
 * rendering) without one: its free document (in the month it was taken) or its credit. Once: the
 * charge is cleared by the same statement. Call it in the transaction that ends the run, so whoever
 * sees the run ended sees the document given back.
 */
export async function refundRunDocument(m: Queryable, runId: string): Promise<boolean> {
  const rows = await modifyReturning<{ project_id: string; billing: 'free' | 'credit'; documents_charged: number; charged_at: Date | null; short_id: string }>(
    m,
    `UPDATE flow_runs r SET documents_charged = 0
       FROM (SELECT id, documents_charged AS was FROM flow_runs WHERE id = $1 FOR UPDATE) old
      WHERE r.id = old.id AND old.was > 0 AND r.billing IS NOT NULL AND r.artefact_key IS NULL AND r.status = ANY($2::text[])
      RETURNING r.project_id, r.billing, old.was AS documents_charged, r.charged_at, r.short_id`,
    [runId, ENDED],
  );
  const row = rows[0];
  if (!row) return false;
  if (row.billing === 'credit') await addCredits(m, row.project_id, row.documents_charged, `refund: flow run ${row.short_id} ended without its document`);
  else await releaseFreeDocuments(m, row.project_id, row.documents_charged, row.charged_at ?? new Date());
  return true;
}
