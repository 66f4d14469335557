import { backupCodeMatches, generateBackupCodes, hashBackupCode, normalizeBackupCode } from '../../../domain/identity/backup-codes';
import { normalizeTimeZone } from '../../../domain/identity/time-zones';

describe('time zones', () => {
  it('accepts IANA names, in their proper spelling', () => {
    expect(normalizeTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(normalizeTimeZone('america/new_york')).toBe('America/New_York');
    expect(normalizeTimeZone('UTC')).toBe('UTC');
    expect(normalizeTimeZone('Etc/GMT+5')).toBe('Etc/GMT+5');
  });

  it('refuses what is not a zone name', () => {
    for (const bad of ['Mars/Olympus_Mons', '+01:00', 'GMT+1 ', '', 'Europe/Berlin; DROP TABLE users']) {
      expect(normalizeTimeZone(bad)).toBeUndefined();
    }
  });
});

describe('backup codes', () => {
  it('generates ten distinct codes shaped xxxxx-xxxxx', () => {
    const codes = generateBackupCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);
  });

  it('reads codes forgivingly: case, spaces, dashes and look-alike letters', () => {
    expect(normalizeBackupCode('AB1C0-DEF23')).toBe('ab1c0def23');
    expect(normalizeBackupCode(' ab1co def23 ')).toBe('ab1c0def23');
    expect(normalizeBackupCode('abIc0-def23')).toBe('ab1c0def23');
    // Hashes are salted per code: the same code hashes differently, and each hash accepts every spelling.
    const stored = hashBackupCode('ab1c0def23')!;
    expect(hashBackupCode('AB1C0-DEF23')).not.toBe(stored);
    expect(backupCodeMatches('AB1C0-DEF23', stored)).toBe(true);
    expect(backupCodeMatches('ab1c0-def24', stored)).toBe(false);
  });

  it('refuses text that cannot be a code', () => {
    expect(normalizeBackupCode('123456')).toBeUndefined();
    expect(normalizeBackupCode('abcde-fghu!')).toBeUndefined();
    expect(hashBackupCode('too-short')).toBeUndefined();
  });
});
