import type { IdentityActivities } from '../../activities/identity';
import { proxyEgressActivities } from '../shared/egress';
import { RETRY } from '../shared/retry-policies';

const { sendInvitationEmail } = proxyEgressActivities<IdentityActivities>({
  startToCloseTimeout: '1 minute',
  // Same schedule as account e-mails: SMTP outages are retried for about a day.
  retry: RETRY.mail,
});

export interface InvitationEmailInput {
  invitationId: string;
}

/**
 * E-mails a project invitation. The activity mints the accept token and sends it in one step, so
 * the plain token never enters workflow history (the invitation row keeps only its hash).
 */
export async function sendInvitationEmailWorkflow(input: InvitationEmailInput): Promise<void> {
  await sendInvitationEmail(input);
}
