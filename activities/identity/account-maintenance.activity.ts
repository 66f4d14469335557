import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import { sweepStrandedRecords, type StrandedWorkPort } from '../maintenance/stranded-records';

export interface AccountMaintenanceDeps extends StrandedWorkPort {
  db: DataSource;
  /** Starts a sign-up's verification e-mail (`signup-email-<userId>`: one per user). */
  restartVerification: (user: { id: string }) => Promise<void>;
}

/** Pending deletions without an outbox mark: what the maintenance backstop checks against Temporal. */
const PENDING_DELETIONS = { table: 'users', at: 'deletion_requested_at', project: 'NULL::uuid', open: `deletion_status = 'pending' AND NOT deletion_workflow_pending` };

/**
 * Identity's part of the maintenance schedule (workflows/maintenance/maintenance.workflow.ts): the
 * accounts whose workflow should run and does not.
 */
export function createAccountMaintenanceActivities(deps: AccountMaintenanceDeps) {
  /** Sign-ups of the last day without a verification e-mail (accounts from before the outbox recorded it with the sign-up). */
  const strandedSignups = async (olderThanSeconds: number): Promise<Array<{ id: string }>> =>
    deps.db.query(
      `SELECT u.id FROM users u
        WHERE u.email_verified_at IS NULL AND u.deletion_status IS NULL
          AND u.created_at < now() - make_interval(secs => $1) AND u.created_at > now() - interval '1 day'
          AND NOT EXISTS (SELECT 1 FROM email_tokens t WHERE t.user_id = u.id AND t.purpose = 'verify_email')
          AND NOT EXISTS (SELECT 1 FROM account_email_starts s WHERE s.input->>'userId' = u.id::text AND s.input->>'purpose' = 'verify_email')
        ORDER BY u.created_at LIMIT 500`,
      [olderThanSeconds],
    );

  return {
    /**
     * Pending account deletions (without an outbox mark) older than `olderThanSeconds` whose
     * workflow is not running are started again with what is left of their grace period
     * (`deletionGraceSeconds`), whether Temporal never knew the workflow or it closed: else the
     * account would stay locked. Then sign-ups without their verification e-mail get it. Returns
     * how many it started.
     */
    async restartStrandedAccounts(input: { olderThanSeconds: number; deletionGraceSeconds: number }): Promise<number> {
      let handled = await sweepStrandedRecords(deps.db, deps, 'accountDeletion', PENDING_DELETIONS, input.olderThanSeconds, (record) =>
        deps.startWorkflowOf(record, { deletionGraceSeconds: input.deletionGraceSeconds }),
      );
      for (const user of await strandedSignups(input.olderThanSeconds)) {
        try {
          await deps.restartVerification(user);
          handled += 1;
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
      }
      return handled;
    },
  };
}
export type AccountMaintenanceActivities = ReturnType<typeof createAccountMaintenanceActivities>;
