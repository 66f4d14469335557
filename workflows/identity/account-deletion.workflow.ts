import { CancellationScope, condition, isCancellation, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { IdentityActivities } from '../../activities/identity';
import type { AccountDeletionInput } from '../../domain/identity/account-deletion';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';
import { restoreAccountSignal } from './account-deletion.signals';

const { beginAccountPurge, abandonAccountDeletion } = proxyActivities<IdentityActivities>({
  startToCloseTimeout: '1 minute',
  // Database outages are waited out; the grace timer runs meanwhile.
  retry: RETRY.mail,
});
const { sendAccountDeletionNotice } = proxyEgressActivities<IdentityActivities>({
  startToCloseTimeout: '1 minute',
  // SMTP outages are waited out; the grace timer runs meanwhile.
  retry: RETRY.mail,
});

const { purgeAccount } = proxyActivities<IdentityActivities>({
  startToCloseTimeout: '10 minutes',
  // A purge must finish once begun (the account is no longer restorable); keep retrying, visibly.
  retry: RETRY.purge,
});

export type AccountDeletionOutcome = 'purged' | 'restored';

/**
 * Account deletion (spec: User account). The grace period is a durable timer, so it survives
 * worker and server restarts; a `restore` signal ends it early without purging, and so does
 * cancelling the workflow. Once the purge has begun it is shielded from cancellation: a
 * half-purged account must not be handed back.
 */
export async function deleteAccountWorkflow(input: AccountDeletionInput): Promise<AccountDeletionOutcome> {
  let restored = false;
  setHandler(restoreAccountSignal, () => {
    restored = true;
  });
  const graceMs = input.graceSeconds * 1000;
  const purgeAt = new Date(Date.now() + graceMs).toISOString();

  try {
    // Not awaited before the timer: a mail outage must not stretch the grace period.
    const notice = sendAccountDeletionNotice({ userId: input.userId, purgeAt }).catch((err: unknown) => {
      if (!isCancellation(err)) log.warn('account deletion notice could not be sent', { userId: input.userId, err: String(err) });
    });
    if (await condition(() => restored, graceMs)) return 'restored';
    await notice;
  } catch (err) {
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => abandonAccountDeletion({ userId: input.userId }));
    throw err;
  }

  return CancellationScope.nonCancellable(async () => {
    // False when a restore won the race against the timer: the database decides.
    if (!(await beginAccountPurge({ userId: input.userId }))) return 'restored';
    const summary = await purgeAccount({ userId: input.userId });
    log.info('account purged', { userId: input.userId, projectsDeleted: summary.projectsDeleted });
    return 'purged';
  });
}
