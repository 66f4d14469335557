import { randomUUID } from 'node:crypto';
import QRCode from 'qrcode';
import speakeasy from 'speakeasy';
import type { DataSource, EntityManager } from 'typeorm';
import { BackupCodeEntity } from '../../db/identity/backup-code.entity';
import type { UserEntity } from '../../db/identity/user.entity';
import { modifyReturning } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { backupCodeMatches, generateBackupCodes, hashBackupCode } from '../../domain/identity/backup-codes';
import { verifyPassword } from '../../domain/identity/passwords';
import { sealSecret } from '../../domain/secret-box';
import type { SecondFactorCheck } from './auth.service';
import { issueTokens, revokeAllRefreshTokens, type TokenDeps, type TokenPair } from './tokens.service';

/**
 * TOTP (RFC 6238: SHA-1, 6 digits, 30 s) with single-use backup codes. `enable` stores a new
 * seed but leaves 2FA off until `verify` proves the authenticator app holds it, so a half-done
 * setup never locks anybody out.
 */

const ISSUER = 'Formwork';
const STEP_SECONDS = 30;
const TOTP = /^\d{6}$/;

export async function twoFactorStatus(db: DataSource, user: UserEntity): Promise<{ enabled: boolean; backupCodesRemaining: number }> {
  if (!user.twoFactorEnabled) return { enabled: false, backupCodesRemaining: 0 };
  const [row] = (await db.query(`SELECT count(*)::int AS n FROM backup_codes WHERE user_id = $1 AND used_at IS NULL`, [user.id])) as { n: number }[];
  return { enabled: true, backupCodesRemaining: row.n };
}

export async function beginTwoFactorSetup(db: DataSource, user: UserEntity): Promise<{ qrCode: string; secret: string; otpauthUrl: string; backupCodes: string[] }> {
  if (user.twoFactorEnabled) throw new AppError('ERR_AUTH_013', 'Two-factor authentication is already enabled; disable it first to set up a new authenticator');
  const secret = speakeasy.generateSecret({ length: 20 }).base32;
  // speakeasy puts the label in the URL as given; an address may hold characters that end a URL path (`#`, `?`).
  const otpauthUrl = speakeasy.otpauthURL({ secret, encoding: 'base32', label: `${ISSUER}:${encodeURIComponent(user.email)}`, issuer: ISSUER, algorithm: 'sha1', digits: 6, period: STEP_SECONDS });
  const qrCode = await QRCode.toDataURL(otpauthUrl, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, width: 256 });
  const backupCodes = await db.transaction(async (m) => {
    // Encrypted at rest like the entity column (db/secret-columns.ts): this raw update bypasses its transformer.
    await m.query(`UPDATE users SET two_factor_secret = $2, two_factor_last_step = NULL, updated_at = now() WHERE id = $1`, [user.id, sealSecret(secret)]);
    return replaceBackupCodes(m, user.id);
  });
  return { qrCode, secret, otpauthUrl, backupCodes };
}

/**
 * Turns 2FA on. Every session signed in without the second factor ends with it (their access
 * tokens fail at once); the caller gets a fresh session in the answer.
 */
export async function completeTwoFactorSetup(db: DataSource, tokens: TokenDeps, user: UserEntity, code: string): Promise<TokenPair> {
  if (!user.twoFactorSecret) throw new AppError('ERR_AUTH_014', 'Two-factor setup has not been started: call POST /api/users/me/2fa/enable first');
  if (!(await acceptTotp(db, user, code))) throw new AppError('ERR_AUTH_012');
  return db.transaction(async (m) => {
    await m.query(`UPDATE users SET two_factor_enabled = true, updated_at = now() WHERE id = $1`, [user.id]);
    await revokeAllRefreshTokens(m, user.id);
    return issueTokens(tokens, user.id, undefined, m);
  });
}

/**
 * Needs the password and, while 2FA is on, a current code (TOTP or an unused backup code), so a
 * stolen session alone cannot strip the second factor. A half-done setup is cancelled with the
 * password alone.
 */
export async function disableTwoFactor(db: DataSource, user: UserEntity, password: string, code: string | undefined): Promise<void> {
  await requirePassword(user, password);
  await createSecondFactorCheck(db)(user, code);
  await db.transaction(async (m) => {
    await m.query(`UPDATE users SET two_factor_enabled = false, two_factor_secret = NULL, two_factor_last_step = NULL, updated_at = now() WHERE id = $1`, [user.id]);
    await m.query(`DELETE FROM backup_codes WHERE user_id = $1`, [user.id]);
  });
}

export async function regenerateBackupCodes(db: DataSource, user: UserEntity, password: string): Promise<string[]> {
  await requirePassword(user, password);
  if (!user.twoFactorEnabled) throw new AppError('ERR_AUTH_014');
  return db.transaction((m) => replaceBackupCodes(m, user.id));
}

/** The login step of contract §2: a TOTP code or an unused backup code, when 2FA is on. */
export function createSecondFactorCheck(db: DataSource): SecondFactorCheck {
  return async function checkSecondFactor(user, code) {
    if (!user.twoFactorEnabled) return;
    if (!code) throw new AppError('ERR_AUTH_012', 'A two-factor authentication code is required', { field: 'code' });
    const ok = TOTP.test(code) ? await acceptTotp(db, user, code) : await consumeBackupCode(db, user.id, code);
    if (!ok) throw new AppError('ERR_AUTH_012', undefined, { field: 'code' });
  };
}

async function requirePassword(user: UserEntity, password: string): Promise<void> {
  if (!(await verifyPassword(password, user.passwordHash))) throw new AppError('ERR_AUTH_002', 'Password is wrong', { field: 'password' });
}

/** Old codes are deleted, not marked used: `backupCodesRemaining` counts only the current set. */
async function replaceBackupCodes(m: EntityManager, userId: string): Promise<string[]> {
  const codes = generateBackupCodes();
  const now = new Date();
  await m.query(`DELETE FROM backup_codes WHERE user_id = $1`, [userId]);
  await m.getRepository(BackupCodeEntity).insert(codes.map((c) => ({ id: randomUUID(), userId, codeHash: hashBackupCode(c)!, usedAt: null, createdAt: now })));
  return codes;
}

/**
 * Checks a TOTP code with one step of clock drift either way, then claims its time step: the
 * conditional update refuses a step at or before the last one used, so a code seen over a
 * shoulder or replayed from a log cannot be used again within its window (RFC 6238 §5.2).
 */
async function acceptTotp(db: DataSource, user: UserEntity, code: string): Promise<boolean> {
  if (!user.twoFactorSecret || !TOTP.test(code)) return false;
  const time = Math.floor(Date.now() / 1000);
  const match = speakeasy.totp.verifyDelta({ secret: user.twoFactorSecret, encoding: 'base32', token: code, window: 1, time, step: STEP_SECONDS });
  if (!match) return false;
  const step = Math.floor(time / STEP_SECONDS) + match.delta;
  const rows = await modifyReturning<{ id: string }>(
    db,
    `UPDATE users SET two_factor_last_step = $2 WHERE id = $1 AND (two_factor_last_step IS NULL OR two_factor_last_step < $2) RETURNING id`,
    [user.id, step],
  );
  return rows.length === 1;
}

/** Finds the code, then claims it with a conditional update (still unused), so two logins cannot share one code. */
async function consumeBackupCode(db: DataSource, userId: string, typed: string): Promise<boolean> {
  // Hashes are salted per code (domain/identity/backup-codes.ts): the match is found among the user's unused codes (at most 10).
  const unused: Array<{ id: string; code_hash: string }> = await db.query(`SELECT id, code_hash FROM backup_codes WHERE user_id = $1 AND used_at IS NULL`, [userId]);
  const match = unused.find((row) => backupCodeMatches(typed, row.code_hash));
  if (!match) return false;
  const rows = await modifyReturning<{ id: string }>(db, `UPDATE backup_codes SET used_at = now() WHERE id = $1 AND used_at IS NULL RETURNING id`, [match.id]);
  return rows.length === 1;
}
