import type { Readable } from 'node:stream';
import { voidEmailTokens } from '../../db/identity/email-tokens';
import { UserEntity } from '../../db/identity/user.entity';
import type { EmailPreferences } from '../../domain/identity/account.types';
import { modifyReturning } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { parseAvatarImage } from '../../domain/identity/avatar-image';
import { hashPassword, verifyPassword } from '../../domain/identity/passwords';
import { normalizeTimeZone } from '../../domain/identity/time-zones';
import { randomBase62 } from '../../domain/signing';
import type { Services } from '../../platform/services';
import { issueTokens, revokeAllRefreshTokens, sessionTokenDeps, type TokenPair } from './tokens.service';

export type UserDeps = Pick<Services, 'db' | 'storage' | 'config' | 'logger'>;

/** A fresh signed, expiring link to the stored avatar, or null without one. */
export async function avatarUrl(deps: UserDeps, user: Pick<UserEntity, 'avatarKey'>): Promise<string | null> {
  if (!user.avatarKey) return null;
  const ext = user.avatarKey.slice(user.avatarKey.lastIndexOf('.'));
  const { url } = await deps.storage.signedUrl(user.avatarKey, { ttlSeconds: deps.config.storage.downloadUrlTtlSeconds, filename: `avatar${ext}` });
  return url;
}

export async function updateProfile(deps: UserDeps, user: UserEntity, input: { name?: string; timezone?: string | null }): Promise<UserEntity> {
  const changes: Partial<UserEntity> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.timezone !== undefined) {
    const zone = input.timezone === null || input.timezone === '' ? null : normalizeTimeZone(input.timezone);
    if (zone === undefined) throw new AppError('ERR_VALID_001', `'timezone' must be an IANA time zone name such as Europe/Berlin`, { field: 'timezone' });
    changes.timezone = zone;
  }
  const repo = deps.db.getRepository(UserEntity);
  if (Object.keys(changes).length > 0) await repo.update({ id: user.id }, { ...changes, updatedAt: new Date() });
  return repo.findOneByOrFail({ id: user.id });
}

/**
 * Ends every session, this one included (its tokens may be what leaked), and answers a fresh
 * session for the caller: their earlier access and refresh tokens fail at once. Outstanding
 * password-reset links die with the old password.
 */
export async function changePassword(deps: UserDeps & Pick<Services, 'secret'>, user: UserEntity, input: { currentPassword: string; newPassword: string }): Promise<TokenPair> {
  if (!(await verifyPassword(input.currentPassword, user.passwordHash))) throw new AppError('ERR_AUTH_002', undefined, { field: 'currentPassword' });
  const passwordHash = await hashPassword(input.newPassword);
  return deps.db.transaction(async (m) => {
    await m.query(`UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, [user.id, passwordHash]);
    await revokeAllRefreshTokens(m, user.id);
    await voidEmailTokens(m, user.id, 'reset_password');
    return issueTokens(sessionTokenDeps(deps), user.id, undefined, m);
  });
}

/** Flags left out keep their value; the merge happens in SQL so concurrent updates do not lose flags. */
export async function updateEmailPreferences(deps: UserDeps, user: UserEntity, input: Partial<EmailPreferences>): Promise<EmailPreferences> {
  const rows = await modifyReturning<{ email_preferences: EmailPreferences }>(
    deps.db,
    `UPDATE users SET email_preferences = email_preferences || $2::jsonb, updated_at = now() WHERE id = $1 RETURNING email_preferences`,
    [user.id, JSON.stringify(input)],
  );
  const prefs = rows[0].email_preferences;
  return { marketingEmails: prefs.marketingEmails, productUpdates: prefs.productUpdates, weeklyDigest: prefs.weeklyDigest };
}

/**
 * Stores a new avatar under a fresh key (so cached links to the old picture stop showing it),
 * swaps it in atomically and then removes the previous file.
 */
export async function setAvatar(deps: UserDeps, user: UserEntity, imageData: string): Promise<string> {
  const image = parseAvatarImage(imageData, deps.config.users.avatarMaxBytes);
  const key = `avatars/${user.id}/${randomBase62(16)}.${image.extension}`;
  await deps.storage.put(key, image.bytes, image.contentType);
  const previous = await swapAvatarKey(deps, user.id, key);
  if (previous) await deleteQuietly(deps, previous);
  return (await avatarUrl(deps, { avatarKey: key }))!;
}

const AVATAR_TYPES: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };

/**
 * The stored picture itself (`GET /api/users/me/avatar`), so a page of this origin shows it whatever
 * the storage (an S3 link is another origin). None, or replaced meanwhile: ERR_USER_010.
 */
export async function readAvatar(deps: UserDeps, user: Pick<UserEntity, 'avatarKey'>): Promise<{ body: Readable; contentType: string; size: number }> {
  const type = user.avatarKey && AVATAR_TYPES[user.avatarKey.slice(user.avatarKey.lastIndexOf('.') + 1)];
  if (!user.avatarKey || !type) throw new AppError('ERR_USER_010');
  try {
    const stored = await deps.storage.get(user.avatarKey);
    return { body: stored.body, contentType: type, size: stored.size };
  } catch (err) {
    if (err instanceof AppError && err.code === 'ERR_FILE_001') throw new AppError('ERR_USER_010');
    throw err;
  }
}

export async function removeAvatar(deps: UserDeps, user: UserEntity): Promise<void> {
  const previous = await swapAvatarKey(deps, user.id, null);
  if (previous) await deleteQuietly(deps, previous);
}

async function swapAvatarKey(deps: UserDeps, userId: string, key: string | null): Promise<string | null> {
  const rows = await modifyReturning<{ previous: string | null }>(
    deps.db,
    `UPDATE users u SET avatar_key = $2, updated_at = now()
       FROM (SELECT avatar_key FROM users WHERE id = $1 FOR UPDATE) old
      WHERE u.id = $1
      RETURNING old.avatar_key AS previous`,
    [userId, key],
  );
  return rows[0]?.previous ?? null;
}

/** The database no longer points at the file, so a failed delete only leaves an orphan behind. */
async function deleteQuietly(deps: UserDeps, key: string): Promise<void> {
  try {
    await deps.storage.delete(key);
  } catch (err) {
    deps.logger.warn('could not delete a replaced avatar', { key, err });
  }
}

/** GDPR-style export: the account, its settings, its projects and the API keys it created (never secrets). */
export async function exportAccount(deps: UserDeps, user: UserEntity) {
  const projects = await deps.db.query(
    `SELECT p.id, p.name, p.slug, p.is_personal, m.role, m.joined_at
       FROM memberships m JOIN projects p ON p.id = m.project_id AND p.deleted_at IS NULL
      WHERE m.user_id = $1 ORDER BY p.is_personal DESC, m.joined_at`,
    [user.id],
  );
  const apiKeys = await deps.db.query(
    `SELECT id, project_id, name, key_prefix, permissions, is_active, created_at
       FROM api_keys WHERE created_by = $1 ORDER BY created_at`,
    [user.id],
  );
  return {
    personal: { id: user.id, email: user.email, name: user.name, createdAt: user.createdAt.toISOString() },
    settings: {
      timezone: user.timezone,
      emailVerified: user.emailVerifiedAt !== null,
      twoFactorEnabled: user.twoFactorEnabled,
      emailPreferences: user.emailPreferences,
      hasProfilePicture: user.avatarKey !== null,
    },
    projects: projects.map((p: Record<string, any>) => ({ id: p.id, name: p.name, slug: p.slug, isPersonal: p.is_personal, role: p.role, joinedAt: new Date(p.joined_at).toISOString() })),
    apiKeys: apiKeys.map((k: Record<string, any>) => ({
      id: k.id,
      teamId: k.project_id,
      name: k.name,
      keyPrefix: k.key_prefix,
      permissions: k.permissions,
      isActive: k.is_active,
      createdAt: new Date(k.created_at).toISOString(),
    })),
    exportedAt: new Date().toISOString(),
    format: 'json' as const,
  };
}
