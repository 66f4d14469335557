import type { DataSource } from 'typeorm';
import { issueEmailToken } from '../../db/identity/email-tokens';
import { UserEntity } from '../../db/identity/user.entity';
import { AppError } from '../../domain/errors';
import { accountEmail, signInLockedEmail } from '../../domain/identity/emails';
import type { Mailer } from '../../adapters/mail/mailer';
import type { AccountEmailInput } from '../../workflows/identity/account-email.workflow';

export interface AccountEmailDeps {
  db: DataSource;
  mailer: Mailer;
  publicUrl: string;
  emailTokenTtlSeconds: number;
}

const PATHS = { verify_email: '/verify-email', reset_password: '/reset-password' } as const;

export function createAccountEmailActivity(deps: AccountEmailDeps) {
  return async function sendAccountEmail(input: AccountEmailInput): Promise<void> {
    const users = deps.db.getRepository(UserEntity);
    // A reset asked for by address: an unknown address (or an account being deleted) gets nothing,
    // found out here, in the background, so the API answered the same either way.
    if (!input.userId) {
      const byEmail = input.email ? await users.findOneBy({ email: input.email }) : null;
      if (!byEmail || byEmail.deletionStatus) return;
      input = { ...input, userId: byEmail.id };
    }
    const user = await users.findOneBy({ id: input.userId });
    if (!user) throw new AppError('ERR_USER_001', `user ${input.userId} no longer exists`);
    if (input.purpose === 'sign_in_locked') {
      await deps.mailer.send(signInLockedEmail(user, input.lockedStep ?? 'password', input.lockSeconds ?? 0));
      return;
    }
    if (input.purpose === 'verify_email' && user.emailVerifiedAt) return;
    const token = await issueEmailToken(deps.db, user.id, input.purpose, deps.emailTokenTtlSeconds);
    const link = `${deps.publicUrl}${PATHS[input.purpose]}?token=${encodeURIComponent(token)}`;
    await deps.mailer.send(accountEmail(input.purpose, user, link, Math.round(deps.emailTokenTtlSeconds / 3600)));
  };
}
