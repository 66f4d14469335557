import { randomInt } from 'node:crypto';
import { sha256Hex } from '../signing';

/**
 * Two-factor backup codes: 10 characters of Crockford base32 (50 random bits), shown as
 * `xxxxx-xxxxx`. Typing is forgiving: case, spaces and dashes are ignored and the letters
 * Crockford rules out (o, i, l) read as the digits they resemble.
 */

export const BACKUP_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 10;

export function generateBackupCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i += 1) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

export function generateBackupCodes(count = BACKUP_CODE_COUNT): string[] {
  const codes = new Set<string>();
  while (codes.size < count) codes.add(generateBackupCode());
  return [...codes];
}

/** The canonical text of a code as typed, or undefined when it cannot be one. */
export function normalizeBackupCode(typed: string): string | undefined {
  const code = typed.toLowerCase().replace(/[\s-]+/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  if (code.length !== LENGTH || [...code].some((c) => !ALPHABET.includes(c))) return undefined;
  return code;
}

/** What is stored: codes carry 50 random bits, so a fast hash cannot be reversed by guessing. */
export function hashBackupCode(typed: string): string | undefined {
  const code = normalizeBackupCode(typed);
  return code === undefined ? undefined : sha256Hex(`backup-code:${code}`);
}
