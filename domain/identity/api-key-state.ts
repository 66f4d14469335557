/**
 * Why an API key does not work, or null when it does (docs/identity.md, "Why a key is inactive").
 * A key is a credential of its project minted by a member: it works only while the key is on,
 * unexpired, and its creator is still a member of the project and not deleting their account.
 * The creator conditions are read live on every call, so a creator who is invited back, or who
 * restores their account, finds their keys working again.
 */
export const API_KEY_INACTIVE_REASONS = ['revoked', 'expired', 'creator_pending_deletion', 'creator_left_project'] as const;
export type ApiKeyInactiveReason = (typeof API_KEY_INACTIVE_REASONS)[number];

export interface ApiKeyState {
  isActive: boolean;
  expiresAt: Date | null;
  /** Whether the user who created the key is a member of the key's project now. */
  creatorIsMember: boolean;
  /** Whether that user's account is pending deletion (or being purged). */
  creatorPendingDeletion: boolean;
}

/** The first reason that applies, in the order the list answers them. */
export function apiKeyInactiveReason(key: ApiKeyState, now: number = Date.now()): ApiKeyInactiveReason | null {
  if (!key.isActive) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now) return 'expired';
  if (key.creatorPendingDeletion) return 'creator_pending_deletion';
  if (!key.creatorIsMember) return 'creator_left_project';
  return null;
}

/** The message of the 401 ERR_AKEY_003 a call with an inactive key receives. */
export const INACTIVE_KEY_MESSAGES: Record<ApiKeyInactiveReason, string> = {
  revoked: 'API key is deactivated',
  expired: 'API key has expired',
  creator_pending_deletion: 'API key is inactive: the account that created it is pending deletion',
  creator_left_project: 'API key is inactive: the member who created it is no longer in the project',
};
