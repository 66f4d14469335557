import type { UserEntity } from '../../db/identity/user.entity';

/** The spec's user object. */
export function presentUser(user: UserEntity, profilePictureUrl: string | null = null) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    profilePictureUrl,
    emailVerified: user.emailVerifiedAt !== null,
    twoFactorEnabled: user.twoFactorEnabled,
    timezone: user.timezone,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}
