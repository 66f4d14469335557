import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../signing';

/**
 * Two-factor backup codes: 10 characters of Crockford base32 (50 random bits), shown as
 * `xxxxx-xxxxx`. Typing is forgiving: case, spaces and dashes are ignored and the letters
 * Crockford rules out (o, i, l) read as the digits they resemble.
 */

const BACKUP_CODE_COUNT = 10;
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

/**
 * What is stored: `s1:<salt>:<HMAC-SHA-256(salt, code)>` with 16 random bytes of salt per code, so
 * one precomputed table cannot serve every stored hash, and equal codes never hash alike. Codes
 * carry 50 random bits, so a fast keyed hash cannot be reversed by guessing.
 */
export function hashBackupCode(typed: string): string | undefined {
  const code = normalizeBackupCode(typed);
  if (code === undefined) return undefined;
  const salt = randomBytes(16).toString('base64url');
  return `${SALTED}${salt}:${saltedDigest(salt, code)}`;
}

const SALTED = 's1:';

function saltedDigest(salt: string, code: string): string {
  return createHmac('sha256', salt).update(`backup-code:${code}`).digest('hex');
}

/**
 * Whether a typed code is the one stored. Hashes stored before salting (bare SHA-256 hex, no
 * `s1:` prefix) are still accepted: such a code keeps working until it is used or the codes are
 * regenerated (docs/security.md, "Credentials: secrets at rest").
 */
export function backupCodeMatches(typed: string, stored: string): boolean {
  const code = normalizeBackupCode(typed);
  if (code === undefined) return false;
  let expected: string;
  let actual: string;
  if (stored.startsWith(SALTED)) {
    const [salt, digest] = stored.slice(SALTED.length).split(':');
    if (!salt || !digest) return false;
    expected = saltedDigest(salt, code);
    actual = digest;
  } else {
    expected = sha256Hex(`backup-code:${code}`);
    actual = stored;
  }
  return actual.length === expected.length && timingSafeEqual(Buffer.from(actual), Buffer.from(expected));
}
