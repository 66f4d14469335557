import { createAccountDeletionActivities, type AccountDeletionDeps } from './account-deletion.activity';
import { createAccountEmailActivity, type AccountEmailDeps } from './account-email.activity';
import { createInvitationEmailActivity, type InvitationEmailDeps } from './invitation-email.activity';

export type IdentityActivityDeps = AccountEmailDeps & InvitationEmailDeps & AccountDeletionDeps;

export function createIdentityActivities(deps: IdentityActivityDeps) {
  return {
    sendAccountEmail: createAccountEmailActivity(deps),
    sendInvitationEmail: createInvitationEmailActivity(deps),
    ...createAccountDeletionActivities(deps),
  };
}
export type IdentityActivities = ReturnType<typeof createIdentityActivities>;
