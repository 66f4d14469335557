import { deliveryMachine, type AnyDeliveryStatus } from '../../domain/deliveries/delivery-status';
import { modifyReturning, type Queryable } from '../sql';

/**
 * The one attempt recorder of both delivery tables, and the only writer of `webhook_deliveries.status`
 * and `reporting_deliveries.status` (docs/architecture.md, "State machines"): conditional UPDATEs
 * from the statuses domain/deliveries/delivery-status.ts allows to reach the target. The attempt
 * activities (activities/webhooks/attempt-delivery.activity.ts, activities/reporting/deliver-report.activity.ts)
 * and the manual retries of the API call it with their table.
 */

export type DeliveryTable = 'webhook_deliveries' | 'reporting_deliveries';

/**
 * What the two tables keep differently (one table would end this): `touch`, set by every write;
 * `marks`, set as an attempt begins, from `attemptFrom`; `completed_at` of a failed delivery;
 * `reopens` and `reopenWhere`, a manual retry's extra column and condition (params $3, $4).
 */
const TABLES: Record<DeliveryTable, { touch: string; marks: string; attemptFrom: AnyDeliveryStatus[]; failedAt: string; reopens: string; reopenWhere: string }> = {
  // Contract §5: no updated_at, completed_at only once delivered; a retry stays in its project and source, its subscription live.
  webhook_deliveries: {
    touch: '',
    marks: ', next_attempt_at = NULL',
    attemptFrom: deliveryMachine.sourcesOf('delivering'),
    failedAt: 'NULL',
    reopens: '',
    reopenWhere: `AND d.project_id = $3 AND d.source = $4 AND (d.subscription_id IS NULL OR EXISTS (
        SELECT 1 FROM webhook_subscriptions s WHERE s.id = d.subscription_id AND s.deleted_at IS NULL AND s.is_active))`,
  },
  // completed_at once ended either way; a reopened delivery carries its outbox mark (platform/workflow-outbox.ts).
  reporting_deliveries: {
    touch: ', updated_at = now()',
    marks: '',
    attemptFrom: deliveryMachine.sourcesOf('delivering', ['pending', 'delivering']),
    failedAt: 'now()',
    reopens: ', retry_pending_since = now()',
    reopenWhere: '',
  },
};

/** Shows the delivery as in flight while its attempt runs; a completed one is left alone. */
export async function markDelivering(db: Queryable, table: DeliveryTable, deliveryId: string): Promise<void> {
  const t = TABLES[table];
  await db.query(`UPDATE ${table} SET status = 'delivering'${t.marks}${t.touch} WHERE id = $1 AND status = ANY($2::text[])`, [deliveryId, t.attemptFrom]);
}

export interface AttemptRecord {
  /** The attempt as the record shows it, numbered here after the ones before it (manual retries' too). */
  attempt: { at: string; statusCode?: number | null; error: string | null; durationMs: number };
  /** `delivering` while a retry is scheduled. */
  status: Extract<AnyDeliveryStatus, 'delivering' | 'completed' | 'failed'>;
  nextAttemptAt: Date | null;
  /** Columns of the table the attempt sets when given (webhook: `url`; report: `remote_ref`, `note`). */
  set?: Partial<Record<'url' | 'remote_ref' | 'note', string | null>>;
}

/**
 * Appends the attempt and moves the status in one statement, so a reader never sees an attempt
 * without its consequence. A delivery the table does not let reach `r.status` (one completed
 * meanwhile) records nothing.
 */
export async function recordAttempt(db: Queryable, table: DeliveryTable, deliveryId: string, r: AttemptRecord): Promise<void> {
  const t = TABLES[table];
  const set = Object.entries(r.set ?? {});
  await db.query(
    `UPDATE ${table} SET
        attempts = attempts || jsonb_build_array($2::jsonb || jsonb_build_object('number', jsonb_array_length(attempts) + 1)),
        status = $3, next_attempt_at = $4,
        completed_at = CASE $3::text WHEN 'completed' THEN now() WHEN 'failed' THEN ${t.failedAt} ELSE NULL END${t.touch}
        ${set.map(([column], i) => `, ${column} = coalesce($${6 + i}, ${column})`).join('')}
      WHERE id = $1 AND status = ANY($5::text[])`,
    [deliveryId, JSON.stringify(r.attempt), r.status, r.nextAttemptAt, deliveryMachine.sourcesOf(r.status), ...set.map(([, value]) => value ?? null)],
  );
}

/**
 * Fails a delivery that is not under way any more: its workflow was cancelled (between attempts,
 * from `pending` or `delivering`), or a manual retry's workflow could not start (`from: ['pending']`;
 * left pending it could never be retried). Unless it ended meanwhile.
 */
export async function abandonDelivery(db: Queryable, table: DeliveryTable, deliveryId: string, from: AnyDeliveryStatus[] = ['pending', 'delivering']): Promise<void> {
  const t = TABLES[table];
  await db.query(`UPDATE ${table} SET status = 'failed', next_attempt_at = NULL, completed_at = ${t.failedAt}${t.touch} WHERE id = $1 AND status = ANY($2::text[])`, [
    deliveryId,
    deliveryMachine.sourcesOf('failed', from),
  ]);
}

/**
 * Manual retry (docs/webhooks.md "Delivery records"; docs/reporting.md "Deliveries"): `failed` (or
 * `skipped`) → `pending`, counting it (a report retry's workflow id takes the count). One conditional
 * UPDATE: of two concurrent retries only one moves the row. A webhook delivery is reopened only in
 * its project and source (`scope`) while its subscription, if any, is active. Answers the retry
 * number, or undefined when nothing moved.
 */
export async function reopenDelivery(db: Queryable, table: DeliveryTable, deliveryId: string, scope: [projectId: string, source: string] | [] = []): Promise<number | undefined> {
  const t = TABLES[table];
  const rows = await modifyReturning<{ manual_retries: number }>(
    db,
    `UPDATE ${table} d SET status = 'pending', next_attempt_at = NULL, completed_at = NULL, manual_retries = d.manual_retries + 1${t.reopens}${t.touch}
      WHERE d.id = $1 AND d.status = ANY($2::text[]) ${t.reopenWhere}
      RETURNING d.manual_retries`,
    [deliveryId, deliveryMachine.sourcesOf('pending'), ...scope],
  );
  return rows[0]?.manual_retries;
}

/** A report delivery's row (db/reporting/delivery-state.ts insertDeliveries): `pending`, or `skipped` with its reason. */
export async function insertReportDelivery(
  db: Queryable,
  d: { id: string; projectId: string; shortId: string; owner: ['run_id' | 'job_run_id', string]; channelId: string; kind: string; target: { key: string; masked: string }; skip?: string },
): Promise<void> {
  const [PENDING, SKIPPED] = deliveryMachine.initial;
  await db.query(
    `INSERT INTO reporting_deliveries (id, project_id, short_id, ${d.owner[0]}, channel_id, kind, target_key, target, status, note, completed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT DO NOTHING`,
    [d.id, d.projectId, d.shortId, d.owner[1], d.channelId, d.kind, d.target.key, d.target.masked, d.skip ? SKIPPED : PENDING, d.skip ?? null, d.skip ? new Date() : null],
  );
}
