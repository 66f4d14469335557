import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { modifyReturning, type Queryable } from '../sql';
import { randomToken, sha256Hex } from '../../domain/signing';
import type { EmailTokenPurpose } from '../../domain/identity/account.types';
import { EmailTokenEntity } from './email-token.entity';

/** Mints a single-use token; returns the plain text (for the e-mail) and stores only its hash. */
export async function issueEmailToken(db: DataSource, userId: string, purpose: EmailTokenPurpose, ttlSeconds: number): Promise<string> {
  const token = randomToken(32);
  const now = new Date();
  await db.getRepository(EmailTokenEntity).insert({
    id: randomUUID(),
    userId,
    purpose,
    tokenHash: sha256Hex(token),
    expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    usedAt: null,
    createdAt: now,
  });
  return token;
}

/** Marks the token used and returns its user, or undefined when unknown, used, expired or of another purpose. */
export async function consumeEmailToken(db: Queryable, token: string, purpose: EmailTokenPurpose): Promise<string | undefined> {
  const rows = await modifyReturning<{ user_id: string }>(
    db,
    `UPDATE email_tokens SET used_at = now()
      WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
      RETURNING user_id`,
    [sha256Hex(token), purpose],
  );
  return rows[0]?.user_id;
}

/**
 * Voids every outstanding token of the user for `purpose` (marks it used), so a reset link sent
 * before the password changed cannot change it again. Pass the transaction of the change.
 */
export async function voidEmailTokens(db: Queryable, userId: string, purpose: EmailTokenPurpose): Promise<void> {
  await db.query(`UPDATE email_tokens SET used_at = now() WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL`, [userId, purpose]);
}

/** Whether the token would be accepted now, without using it up (the reset form checks before it shows). */
export async function consumableEmailToken(db: Queryable, token: string, purpose: EmailTokenPurpose): Promise<boolean> {
  const rows = (await db.query(
    `SELECT 1 FROM email_tokens WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()`,
    [sha256Hex(token), purpose],
  )) as unknown[];
  return rows.length > 0;
}
