import { createAccountEmailActivity, type AccountEmailDeps } from './account-email.activity';

export type IdentityActivityDeps = AccountEmailDeps;

export function createIdentityActivities(deps: IdentityActivityDeps) {
  return { sendAccountEmail: createAccountEmailActivity(deps) };
}
export type IdentityActivities = ReturnType<typeof createIdentityActivities>;
