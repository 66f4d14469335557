import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { consumeEmailToken, voidEmailTokens } from '../../db/identity/email-tokens';
import { MembershipEntity } from '../../db/identity/membership.entity';
import { ProjectEntity } from '../../db/identity/project.entity';
import { UserEntity } from '../../db/identity/user.entity';
import { isUniqueViolation } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { DUMMY_PASSWORD_HASH, hashPassword, needsRehash, verifyPassword } from '../../domain/identity/passwords';
import { uniqueSlug } from '../../domain/identity/slugs';
import { workflowIds } from '../../domain/temporal-names';
import type { Services } from '../../platform/services';
import { recordAccountEmail } from '../../platform/workflow-outbox';
import { attemptLimits } from './attempt-limits';
import { issueTokens, revokeAllRefreshTokens, type TokenDeps, type TokenPair } from './tokens.service';

export type AuthDeps = Pick<Services, 'db' | 'temporal' | 'taskQueues' | 'secret' | 'config' | 'logger' | 'redis' | 'outbox'>;

export function tokenDeps(deps: AuthDeps): TokenDeps {
  return { db: deps.db, secret: deps.secret, jwtTtlSeconds: deps.config.auth.jwtTtlSeconds, refreshTokenTtlSeconds: deps.config.auth.refreshTokenTtlSeconds };
}

export async function signup(deps: AuthDeps, input: { email: string; password: string; name: string }): Promise<{ user: UserEntity } & TokenPair> {
  const passwordHash = await hashPassword(input.password);
  const now = new Date();
  const user: UserEntity = Object.assign(new UserEntity(), {
    id: randomUUID(),
    email: input.email,
    name: input.name,
    passwordHash,
    emailVerifiedAt: null,
    timezone: null,
    emailPreferences: { marketingEmails: false, productUpdates: true, weeklyDigest: false },
    avatarKey: null,
    twoFactorEnabled: false,
    twoFactorSecret: null,
    deletionRequestedAt: null,
    deletionStatus: null,
    createdAt: now,
    updatedAt: now,
  });
  let verification;
  try {
    verification = await deps.db.transaction(async (m) => {
      await m.getRepository(UserEntity).insert(user);
      const projectId = randomUUID();
      await m.getRepository(ProjectEntity).insert({
        id: projectId,
        name: `${input.name}'s project`,
        slug: uniqueSlug(input.name),
        isPersonal: true,
        ownerId: user.id,
        plan: 'free',
        deletedAt: null,
        createdAt: now,
        updatedAt: now,
      });
      await m.getRepository(MembershipEntity).insert({ projectId, userId: user.id, role: 'owner', joinedAt: now });
      // The verification e-mail commits with the account (platform/workflow-outbox.ts): never a sign-up without one.
      return recordAccountEmail(m, { userId: user.id, purpose: 'verify_email' }, workflowIds.signupEmail(user.id));
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('ERR_USER_002');
    throw err;
  }
  deps.outbox.start(verification);
  return { user, ...(await issueTokens(tokenDeps(deps), user.id)) };
}

/** Throws ERR_AUTH_012 when the account needs a second factor and `code` is missing or wrong. */
export type SecondFactorCheck = (user: UserEntity, code: string | undefined) => Promise<void>;
export const noSecondFactor: SecondFactorCheck = async () => undefined;

/**
 * Password, then second factor, each behind its attempt limit (attempt-limits.ts): the password per
 * e-mail address, the code per account. Locked: 429 ERR_AUTH_015, even for the right password.
 */
export async function login(deps: AuthDeps, input: { email: string; password: string; code?: string }, checkSecondFactor: SecondFactorCheck): Promise<{ user: UserEntity } & TokenPair> {
  const user = await checkPassword(deps, input.email, input.password);
  if (!user) throw new AppError('ERR_AUTH_001');
  if (user.deletionStatus === 'pending') throw new AppError('ERR_USER_004');
  if (user.deletionStatus === 'purging') throw new AppError('ERR_USER_005');
  if (user.twoFactorEnabled && input.code) {
    // Only a code that was given counts: the first step of a two-step login sends none.
    const limit = attemptLimits(deps).secondFactor;
    const attempt = await limit.begin(user.id);
    try {
      await checkSecondFactor(user, input.code);
    } catch (err) {
      if (err instanceof AppError && err.code === 'ERR_AUTH_012') await lockNotice(deps, user, 'second_factor', await limit.failed(user.id, attempt));
      throw err;
    }
    await limit.succeeded(user.id);
  } else {
    await checkSecondFactor(user, input.code);
  }
  return { user, ...(await issueTokens(tokenDeps(deps), user.id)) };
}

export type SignInDeps = Pick<Services, 'db' | 'temporal' | 'taskQueues' | 'config' | 'logger' | 'redis' | 'outbox'>;

/**
 * The password step of login, the invitation page and restore-account: one attempt limit per
 * address for all three. The user when the password is right (its hash upgraded to today's cost
 * when it was made with another), else undefined; an unknown address costs the same hash work.
 */
export async function checkPassword(deps: SignInDeps, email: string, password: string): Promise<UserEntity | undefined> {
  const limit = attemptLimits(deps).password;
  const subject = email.trim().toLowerCase();
  const attempt = await limit.begin(subject);
  const user = await deps.db.getRepository(UserEntity).findOneBy({ email });
  const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
  if (!user || !ok) {
    await lockNotice(deps, user, 'password', await limit.failed(subject, attempt));
    return undefined;
  }
  await limit.succeeded(subject);
  if (needsRehash(user.passwordHash)) {
    const old = user.passwordHash;
    user.passwordHash = await hashPassword(password);
    // Conditional on the old hash, so a password changed meanwhile is not overwritten.
    await deps.db.query(`UPDATE users SET password_hash = $2 WHERE id = $1 AND password_hash = $3`, [user.id, user.passwordHash, old]);
  }
  return user;
}

/** The e-mail to the owner when a failure first locks a step (`lockSeconds` set). */
async function lockNotice(deps: SignInDeps, user: UserEntity | null | undefined, step: 'password' | 'second_factor', lockSeconds: number | undefined): Promise<void> {
  if (!user || lockSeconds === undefined) return;
  deps.outbox.start(await recordAccountEmail(deps.db, { userId: user.id, purpose: 'sign_in_locked', lockedStep: step, lockSeconds }));
}

/**
 * Records the e-mail and starts, off the request path, the workflow that mints a token and e-mails
 * the link (retried through SMTP outages); a worker's sweep starts it if this process cannot.
 */
export async function sendAccountEmail(deps: Pick<AuthDeps, 'db' | 'outbox'>, userId: string, purpose: 'verify_email' | 'reset_password'): Promise<void> {
  deps.outbox.start(await recordAccountEmail(deps.db, { userId, purpose }));
}

export async function verifyEmail(db: DataSource, token: string): Promise<void> {
  const userId = await consumeEmailToken(db, token, 'verify_email');
  if (!userId) throw new AppError('ERR_AUTH_007');
  await db.query(`UPDATE users SET email_verified_at = COALESCE(email_verified_at, now()), updated_at = now() WHERE id = $1`, [userId]);
}

/**
 * Always answers the same, in the same time, whether or not the address has an account (no account
 * probing): the request only counts against the address's e-mail limit and starts the e-mail
 * workflow with the address; the activity finds out in the background whether there is anyone to send to.
 */
export async function forgotPassword(deps: AuthDeps, email: string): Promise<void> {
  await attemptLimits(deps).resetEmail.spend(email);
  deps.outbox.start(await recordAccountEmail(deps.db, { email, purpose: 'reset_password' }));
}

/** A reset also signs the user out everywhere (every session ends) and voids the user's other reset links. */
export async function resetPassword(db: DataSource, token: string, newPassword: string): Promise<void> {
  const passwordHash = await hashPassword(newPassword);
  await db.transaction(async (m) => {
    const userId = await consumeEmailToken(m, token, 'reset_password');
    if (!userId) throw new AppError('ERR_AUTH_007');
    await m.query(`UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, [userId, passwordHash]);
    await revokeAllRefreshTokens(m, userId);
    await voidEmailTokens(m, userId, 'reset_password');
  });
}
