import { WorkflowNotFoundError } from '@temporalio/client';
import { UserEntity } from '../../db/identity/user.entity';
import { modifyReturning } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { verifyPassword } from '../../domain/identity/passwords';
import { workflowIds } from '../../domain/temporal-names';
import type { Services } from '../../platform/services';
import { restoreAccountSignal } from '../../workflows/identity/account-deletion.signals';
import { checkPassword } from './auth.service';
import { revokeAllRefreshTokens } from './tokens.service';

export type AccountDeletionDeps = Pick<Services, 'db' | 'temporal' | 'taskQueues' | 'config' | 'logger' | 'redis' | 'outbox'>;

const CLEAR_DELETION = `deletion_status = NULL, deletion_requested_at = NULL, deletion_reason = NULL, deletion_reason_text = NULL, deletion_workflow_pending = false, updated_at = now()`;

/**
 * DELETE /api/users/me: marks the account pending (so the very next call already answers
 * ERR_USER_004), signs it out everywhere and marks it `deletion_workflow_pending` (the outbox,
 * platform/workflow-outbox.ts); after commit it starts the workflow that owns the grace period. If
 * that start fails, a worker's sweep starts it, with what is left of the grace period.
 */
export async function requestAccountDeletion(
  deps: AccountDeletionDeps,
  user: UserEntity,
  input: { password: string; reason?: string; reasonText?: string },
): Promise<{ purgeAfter: Date }> {
  if (!(await verifyPassword(input.password, user.passwordHash))) throw new AppError('ERR_AUTH_002', 'Password is wrong', { field: 'password' });
  await deps.db.transaction(async (m) => {
    const rows = await modifyReturning<{ id: string }>(
      m,
      `UPDATE users SET deletion_status = 'pending', deletion_requested_at = now(), deletion_reason = $2, deletion_reason_text = $3,
              deletion_workflow_pending = true, updated_at = now()
        WHERE id = $1 AND deletion_status IS NULL RETURNING id`,
      [user.id, input.reason || null, input.reasonText || null],
    );
    // Lost a race with a concurrent deletion request: that one owns the grace period.
    if (rows.length === 0) throw new AppError('ERR_USER_004');
    await revokeAllRefreshTokens(m, user.id);
  });

  try {
    // Awaited (a rare request, and the restore and a repeated request act on the run at once), but a
    // failed start no longer fails the request: the mark stays and a worker's sweep starts it.
    await deps.outbox.startNow({ kind: 'accountDeletion', id: user.id });
  } catch (err) {
    deps.logger.warn('account deletion workflow not started; the outbox sweep will start it', { userId: user.id, err });
  }
  return { purgeAfter: new Date(Date.now() + deps.config.users.deletionGraceSeconds * 1000) };
}

/**
 * POST /api/auth/restore-account. Wrong e-mail and wrong password answer the same ERR_USER_006,
 * and the account's state is only revealed to someone who proved the password.
 */
export async function restoreAccount(deps: AccountDeletionDeps, input: { email: string; password: string }): Promise<void> {
  // The same password attempt limit as login (429 ERR_AUTH_015 when locked).
  const user = await checkPassword(deps, input.email, input.password);
  if (!user) throw new AppError('ERR_USER_006', 'Account restore failed: wrong e-mail address or password');
  if (user.deletionStatus === null) throw new AppError('ERR_USER_007');
  if (user.deletionStatus === 'purging') throw new AppError('ERR_USER_005');

  // The database decides a race with the end of the grace period: the workflow's switch to
  // `purging` is conditional on `pending` too, so exactly one side wins.
  const rows = await modifyReturning<{ id: string }>(deps.db, `UPDATE users SET ${CLEAR_DELETION} WHERE id = $1 AND deletion_status = 'pending' RETURNING id`, [user.id]);
  if (rows.length === 0) {
    const [now] = (await deps.db.query(`SELECT deletion_status FROM users WHERE id = $1`, [user.id])) as { deletion_status: string | null }[];
    if (!now) throw new AppError('ERR_USER_006', 'Account restore failed: the account no longer exists');
    if (now.deletion_status === 'purging') throw new AppError('ERR_USER_005');
    return; // restored by a concurrent request
  }

  try {
    await deps.temporal.workflow.getHandle(workflowIds.accountDeletion(user.id)).signal(restoreAccountSignal);
  } catch (err) {
    // The restore already stands in the database; a workflow that missed the signal finds the
    // account no longer pending when its timer fires and ends without purging.
    if (!(err instanceof WorkflowNotFoundError)) deps.logger.warn('could not signal the account deletion workflow', { userId: user.id, err });
  }
}
