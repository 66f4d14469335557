import type { IdentityActivities } from '../../activities/identity';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';

const { sendAccountEmail } = proxyEgressActivities<IdentityActivities>({
  startToCloseTimeout: '1 minute',
  // SMTP outages are retried for about a day; a bad address is a non-retryable failure.
  retry: RETRY.mail,
});

export interface AccountEmailInput {
  /** The account. A password reset asked for by address carries `email` instead (see forgotPassword). */
  userId?: string;
  email?: string;
  purpose: 'verify_email' | 'reset_password' | 'sign_in_locked';
  /** sign_in_locked: the step that locked and for how long (no token, no link). */
  lockedStep?: 'password' | 'second_factor';
  lockSeconds?: number;
}

/**
 * Sends a verification or password-reset e-mail, or the notice that sign-in was locked. The activity
 * mints the token and sends it in one step, so the plain token never enters workflow history (only
 * its hash is stored).
 */
export async function sendAccountEmailWorkflow(input: AccountEmailInput): Promise<void> {
  await sendAccountEmail(input);
}
