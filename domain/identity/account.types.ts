import type { Role } from './roles';

/** A user's e-mail choices (`users.email_preferences`). */
export interface EmailPreferences {
  marketingEmails: boolean;
  productUpdates: boolean;
  weeklyDigest: boolean;
}

/** Spec, Invitation: pending, then accepted or rejected by the invitee, or cancelled by the owner. */
export type InvitationStatus = 'pending' | 'accepted' | 'rejected' | 'cancelled';

/** A role an invitation (or a role change) may grant: never `owner`, a project has exactly one. */
export type InvitableRole = Exclude<Role, 'owner'>;

/** What an e-mailed single-use token is for. */
export type EmailTokenPurpose = 'verify_email' | 'reset_password';
