import type { Queryable } from '../sql';

/** Review sessions of these e-mails that have no pending approval left in their project die (docs/flow.md). */
export async function revokeIdleReviewTokens(db: Queryable, emails: string[]): Promise<void> {
  await db.query(
    `UPDATE flow_review_tokens t SET revoked_at = now()
      WHERE t.email = ANY($1::text[]) AND t.revoked_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM flow_approvals a WHERE a.approver_email = t.email AND a.project_id = t.project_id AND a.status = 'pending')`,
    [emails],
  );
}
