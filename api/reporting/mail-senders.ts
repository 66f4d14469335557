import type { DataSource } from 'typeorm';
import type { Scope } from '../middleware/guards';
import { requireVerifiedSender } from '../middleware/verified-sender';
import { isUuid } from '../../domain/ids';

/**
 * No open relay through reporting (docs/security.md "Reporting channels: verified senders, budgets,
 * header secrets"): a call that makes a report delivery go out by e-mail now (start a run or a job
 * run with an e-mail channel, retry one, re-send deliveries, trigger a schedule) needs a verified
 * sender behind it, as Flow's approval re-send does (403 ERR_AUTH_006). Channels are named by UUID
 * or `rch_` short id; only active e-mail channels of the caller's project count.
 */
export async function requireVerifiedForEmailChannels(db: DataSource, scope: Scope, refs: readonly string[] | undefined, what: string): Promise<void> {
  if (!refs || refs.length === 0) return;
  const [{ mails }]: Array<{ mails: boolean }> = await db.query(
    `SELECT EXISTS (SELECT 1 FROM reporting_channels WHERE project_id = $1 AND kind = 'email' AND is_active AND (id::text = ANY($2::text[]) OR short_id = ANY($2::text[]))) AS mails`,
    [scope.projectId, refs.map((r) => (isUuid(r) ? r.toLowerCase() : r))],
  );
  if (mails) await requireVerifiedSender(db, scope, what);
}

/** The same for re-sending deliveries: `kind` of the deliveries about to be sent again. */
export async function requireVerifiedForEmailDeliveries(db: DataSource, scope: Scope, where: { deliveryRef: string } | { runId: string } | { jobRunId: string }, what: string): Promise<void> {
  const [{ mails }]: Array<{ mails: boolean }> =
    'deliveryRef' in where
      ? await db.query(`SELECT EXISTS (SELECT 1 FROM reporting_deliveries WHERE project_id = $1 AND kind = 'email' AND (id::text = $2 OR short_id = $2)) AS mails`, [scope.projectId, isUuid(where.deliveryRef) ? where.deliveryRef.toLowerCase() : where.deliveryRef])
      : await db.query(`SELECT EXISTS (SELECT 1 FROM reporting_deliveries WHERE project_id = $1 AND kind = 'email' AND status = 'failed' AND ${'runId' in where ? 'run_id' : 'job_run_id'} = $2) AS mails`, [
          scope.projectId,
          'runId' in where ? where.runId : where.jobRunId,
        ]);
  if (mails) await requireVerifiedSender(db, scope, what);
}
