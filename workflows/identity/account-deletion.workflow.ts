import { CancellationScope, condition, isCancellation, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { IdentityActivities } from '../../activities/identity';
import type { AccountDeletionInput } from '../../domain/identity/account-deletion';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';
import { deletionRequestedSignal, restoreAccountSignal } from './account-deletion.signals';

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
 *
 * The run is tied to the request it serves (docs/identity.md "A run is tied to its request"): a
 * `deletionRequested` signal (sent with signal-with-start) for a newer request, which arrives when
 * the account was restored but this run missed the restore signal, makes it wait for the new
 * request's grace period, with a notice of its own; the purge begins only while the account's
 * pending deletion is still the request this run waits for. Histories without that signal take
 * the same commands as before: no patch.
 */
export async function deleteAccountWorkflow(input: AccountDeletionInput): Promise<AccountDeletionOutcome> {
  let restored = false;
  let request = { token: input.requestToken, purgeAtMs: Date.now() + input.graceSeconds * 1000 };
  setHandler(restoreAccountSignal, () => {
    restored = true;
  });
  setHandler(deletionRequestedSignal, (next) => {
    if (next.requestToken === request.token) return;
    request = { token: next.requestToken, purgeAtMs: Date.parse(next.purgeAt) };
    restored = false;
  });

  for (;;) {
    const waitingFor = request;
    try {
      // Not awaited before the timer: a mail outage must not stretch the grace period.
      const notice = sendAccountDeletionNotice({ userId: input.userId, purgeAt: new Date(waitingFor.purgeAtMs).toISOString() }).catch((err: unknown) => {
        if (!isCancellation(err)) log.warn('account deletion notice could not be sent', { userId: input.userId, err: String(err) });
      });
      if (await condition(() => restored || request !== waitingFor, Math.max(1, waitingFor.purgeAtMs - Date.now()))) {
        if (restored) return 'restored';
        // A newer request: its own notice and grace period.
        continue;
      }
      await notice;
    } catch (err) {
      if (isCancellation(err)) await CancellationScope.nonCancellable(() => abandonAccountDeletion({ userId: input.userId, requestToken: request.token }));
      throw err;
    }
    // False when a restore won the race against the timer, or a newer request is pending: the database decides.
    if (await CancellationScope.nonCancellable(() => beginAccountPurge({ userId: input.userId, requestToken: waitingFor.token }))) break;
    // A newer request's signal may have arrived meanwhile; without one, the account was restored.
    if (request === waitingFor) return 'restored';
  }

  return CancellationScope.nonCancellable(async (): Promise<AccountDeletionOutcome> => {
    const summary = await purgeAccount({ userId: input.userId });
    log.info('account purged', { userId: input.userId, projectsDeleted: summary.projectsDeleted });
    return 'purged';
  });
}
