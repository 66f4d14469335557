import { ApplicationFailure } from '@temporalio/common';
import type { DataSource } from 'typeorm';
import { issueEmailToken } from '../../db/identity/email-tokens';
import { UserEntity } from '../../db/identity/user.entity';
import { accountEmail } from '../../domain/identity/emails';
import type { Mailer } from '../mail/mailer';
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
    const user = await deps.db.getRepository(UserEntity).findOneBy({ id: input.userId });
    if (!user) throw ApplicationFailure.nonRetryable(`user ${input.userId} no longer exists`, 'ERR_USER_001');
    if (input.purpose === 'verify_email' && user.emailVerifiedAt) return;
    const token = await issueEmailToken(deps.db, user.id, input.purpose, deps.emailTokenTtlSeconds);
    const link = `${deps.publicUrl}${PATHS[input.purpose]}?token=${encodeURIComponent(token)}`;
    await deps.mailer.send(accountEmail(input.purpose, user, link, Math.round(deps.emailTokenTtlSeconds / 3600)));
  };
}
