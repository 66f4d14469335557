import { createHash } from 'node:crypto';
import { backupCodeMatches, generateBackupCode, hashBackupCode } from '../../../domain/identity/backup-codes';

describe('backup code hashes: salted per code (domain/identity/backup-codes.ts)', () => {
  it('stores s1:<salt>:<hmac>, never the code, and the same code never hashes alike', () => {
    const code = generateBackupCode();
    const a = hashBackupCode(code)!;
    const b = hashBackupCode(code)!;
    expect(a).toMatch(/^s1:[\w-]{22}:[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain(code.replace('-', ''));
    expect(backupCodeMatches(code, a)).toBe(true);
    expect(backupCodeMatches(code, b)).toBe(true);
    // Typing is still forgiving: case, spaces, dashes.
    expect(backupCodeMatches(` ${code.toUpperCase().replace('-', ' ')} `, a)).toBe(true);
  });

  it('refuses another code, garbage and tampered hashes', () => {
    const code = generateBackupCode();
    const stored = hashBackupCode(code)!;
    let other = generateBackupCode();
    while (other === code) other = generateBackupCode();
    expect(backupCodeMatches(other, stored)).toBe(false);
    for (const typed of ['', 'x', "' OR 1=1 --", 'a'.repeat(10_000)]) expect(backupCodeMatches(typed, stored)).toBe(false);
    expect(backupCodeMatches(code, 's1:')).toBe(false);
    expect(backupCodeMatches(code, `${stored.slice(0, -1)}${stored.endsWith('0') ? '1' : '0'}`)).toBe(false);
  });

  it('still accepts a hash stored before salting (unsalted SHA-256)', () => {
    const code = generateBackupCode();
    const legacy = createHash('sha256').update(`backup-code:${code.replace('-', '')}`).digest('hex');
    expect(backupCodeMatches(code, legacy)).toBe(true);
    expect(backupCodeMatches(code === '00000-00000' ? '11111-11111' : '00000-00000', legacy)).toBe(false);
  });
});
